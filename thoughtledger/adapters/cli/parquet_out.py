"""Thought rows to an Apache Parquet file with ``pyarrow`` (the ``parquet`` extra).

The only module that imports ``pyarrow``, and only when a Parquet export runs: the command line
works without the extra. Each page of rows becomes one row group, so memory holds one page.
"""

from collections.abc import Mapping, Sequence
from typing import IO, Any

from thoughtledger.adapters.cli.common import CliError
from thoughtledger.ledger.envelope import parse_time
from thoughtledger.projections.thought_rows import THOUGHT_COLUMN_TYPES


class ParquetRows:
    """Writes pages of rows (thoughts', or annotations') to a binary file as one Parquet file.

    Args:
        out: The binary file.
        types: Each column and its type, in order (default: the thought rows').

    Raises:
        CliError: ``pyarrow`` is not installed (names the extra to install).
    """

    def __init__(self, out: IO[bytes], types: Mapping[str, str] = THOUGHT_COLUMN_TYPES) -> None:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise CliError(
                "writing Parquet needs pyarrow; install it with "
                "pip install 'thoughtledger[parquet]'"
            ) from exc
        self._pa = pa
        fields = []
        for name, kind in types.items():
            arrow = pa.timestamp("us", tz="UTC") if kind == "timestamp" else pa.type_for_alias(kind)
            fields.append(pa.field(name, arrow))
        self._schema = pa.schema(fields)
        self._writer: Any = pq.ParquetWriter(out, self._schema, compression="zstd")

    def write(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Append ``rows`` (a page) as one row group."""
        if not rows:
            return
        columns = list(zip(*rows, strict=True))
        times = self._schema.names.index("recorded_at")
        columns[times] = tuple(parse_time(text) for text in columns[times])
        arrays = [
            self._pa.array(values, type=field.type)
            for values, field in zip(columns, self._schema, strict=True)
        ]
        self._writer.write_batch(self._pa.record_batch(arrays, schema=self._schema))

    def close(self) -> None:
        """Write the file's footer (without it the file is unreadable)."""
        self._writer.close()


__all__ = ["ParquetRows"]
