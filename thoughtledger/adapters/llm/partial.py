"""The thought in a model's answer while it is still being written, piece by piece.

A structured answer arrives as JSON text (``{"thought": "...", "confidence": ...}``, perhaps in
a Markdown fence); :class:`ThoughtStream` reads it as it comes and gives back only the decoded
text of ``thought``, escapes split across pieces included. An answer that turns out not to be
such an object is plain text, given back whole. Either way the text is trimmed as
:func:`~thoughtledger.adapters.llm.answer.parse_answer` trims it: leading whitespace is dropped and
trailing whitespace held back until more text follows, so what was given back never has to be
taken back.
"""

from typing import Literal

_State = Literal["undecided", "plain", "json", "done"]
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_FENCE_HEADER = 16
"""How much of a fence header (backticks, ``json``, whitespace) is read before giving up on it."""


class _Trimmed:
    """Gives text back stripped as ``str.strip`` would strip the whole, without looking ahead."""

    def __init__(self) -> None:
        self.started = False
        self.held = ""

    def feed(self, text: str) -> str:
        if not self.started:
            text = text.lstrip()
            if not text:
                return ""
            self.started = True
        body = text.rstrip()
        if not body:
            self.held += text
            return ""
        out = self.held + body
        self.held = text[len(body) :]
        return out


class ThoughtStream:
    """Reads an answer piece by piece and returns the thought's new text after each piece.

    Args:
        structured: Whether a structured answer (JSON) was asked for; if not, the answer is the
            thought.
    """

    def __init__(self, *, structured: bool) -> None:
        self._state: _State = "undecided" if structured else "plain"
        self._head = ""
        self._trim = _Trimmed()
        self.text = ""
        """Everything given back so far."""
        # The JSON scanner: nesting depth, whether inside a string, the key being read, whether
        # the string being read is the thought, and an escape not yet complete.
        self._depth = 0
        self._in_string = False
        self._string = ""
        self._is_thought = False
        self._expect_key = False
        self._key: str | None = None
        self._escape: str | None = None
        self._high: str | None = None
        self._seen_thought = False

    def feed(self, piece: str) -> str:
        """Read the next piece of the answer; return the thought's text it adds (maybe ``""``)."""
        out = self._feed(piece)
        given = self._trim.feed(out) if out else ""
        self.text += given
        return given

    def _feed(self, piece: str) -> str:
        if self._state == "plain":
            return piece
        if self._state == "done":
            return ""
        if self._state == "undecided":
            self._head += piece
            decided = self._decide()
            if decided is None:
                return ""
            piece, self._head = decided, ""
            if self._is_plain():
                return piece
        return self._scan(piece)

    def _is_plain(self) -> bool:
        # A method, so that mypy does not hold the state narrowed across _decide().
        return self._state == "plain"

    def _decide(self) -> str | None:
        """Choose JSON or plain text once the head shows which; the text left to read."""
        head = self._head.lstrip()
        if not head:
            return None
        if head[0] == "{":
            self._state = "json"
            return head
        if head[0] == "`":
            rest = head.lstrip("`")
            rest = rest[4:] if rest.startswith("json") else rest
            stripped = rest.lstrip()
            if stripped.startswith("{"):
                self._state = "json"
                return stripped
            if not stripped and len(head) < _FENCE_HEADER:
                return None  # the fence's header may still be arriving
            if "json".startswith(rest) and len(head) < _FENCE_HEADER:
                return None
        self._state = "plain"
        return self._head

    def _scan(self, piece: str) -> str:
        out: list[str] = []
        for char in piece:
            if self._state == "done":
                break
            if self._in_string:
                decoded = self._string_char(char)
                if decoded and self._is_thought:
                    out.append(decoded)
                continue
            if char == '"':
                self._in_string = True
                self._is_thought = (
                    self._depth == 1 and self._key == "thought" and not self._seen_thought
                )
                self._seen_thought = self._seen_thought or self._is_thought
                self._string = ""
            elif char in "{[":
                self._depth += 1
                self._expect_key = char == "{" and self._depth == 1
            elif char in "}]":
                self._depth -= 1
                if self._depth <= 0:
                    self._state = "done"
            elif char == "," and self._depth == 1:
                self._expect_key, self._key = True, None
        return "".join(out)

    def _string_char(self, char: str) -> str:
        """Read one character inside a string; the decoded text it completes."""
        if self._escape is not None:
            self._escape += char
            if self._escape[0] != "u":
                code, self._escape = self._escape, None
                return self._keep(_ESCAPES.get(code, code))
            if len(self._escape) < 5:
                return ""
            hex_digits, self._escape = self._escape[1:], None
            try:
                unit = int(hex_digits, 16)
            except ValueError:
                return self._keep("\ufffd")
            if 0xD800 <= unit < 0xDC00:
                self._high = chr(unit)
                return ""
            if 0xDC00 <= unit < 0xE000 and self._high is not None:
                pair = (self._high + chr(unit)).encode("utf-16", "surrogatepass")
                self._high = None
                return self._keep(pair.decode("utf-16"))
            return self._keep(chr(unit))
        if char == "\\":
            self._escape = ""
            return ""
        if char == '"':
            self._in_string = False
            if self._expect_key and self._depth == 1:
                self._key, self._expect_key = self._string, False
            return ""
        return self._keep(char)

    def _keep(self, text: str) -> str:
        # A high surrogate with no low one after it is not a character: the JSON parser would
        # refuse the answer, so nothing sensible can stand for it.
        self._high = None
        if self._expect_key:
            self._string += text
            return ""
        return text


__all__ = ["ThoughtStream"]
