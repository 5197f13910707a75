"""The error an adapter raises when its framework is not installed: which extra brings it."""


def missing_framework(adapter: str, framework: str, extra: str, cause: ImportError) -> ImportError:
    """Return the error saying that ``adapter`` needs ``framework``, from the extra ``extra``.

    ``cause`` (the failed import) is kept in the message: when the framework is installed but
    broken, it names the module that is really missing.
    """
    return ImportError(
        f"{adapter} needs {framework}, which is not installed ({cause}): "
        f"pip install 'thoughtledger[{extra}]'",
        name=cause.name,
    )
