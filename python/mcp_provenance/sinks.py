"""Audit sinks that need nothing but the standard library: :class:`JsonLinesSink`, the
JSON-lines file every worker of a server appends its accounts to.

>>> import os, tempfile
>>> from mcp_provenance import Filter
>>> from mcp_provenance.sinks import JsonLinesSink
>>> path = os.path.join(tempfile.mkdtemp(), "audit.jsonl")
>>> audit = JsonLinesSink(path)
>>> outcome = Filter({"policy": {"userIntent": "redact"}})(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
>>> for account, line in zip(outcome["messages"], outcome["lines"]):
...     audit(account, line)
>>> with open(path, encoding="utf-8") as written:
...     print(written.read(), end="")
{"message":{"jsonrpc":"2.0","id":1,"method":"ping"},"kind":"request","id":1,"valid":true,"record":{"method":"ping","requestId":1,"clientAsserted":{},"hostAttested":{},"witnessed":{},"diagnostics":[],"valid":true},"changes":[]}

:class:`~mcp_provenance.asgi.ProvenanceMiddleware` makes one of a path given as its
``audit`` (``audit="audit.jsonl"``).
"""

from __future__ import annotations

import os
from typing import Optional, Union

from .errors import ProvenanceValueError
from .types import Account

__all__ = ["JsonLinesSink"]

#: What a path may be given as.
PathLike = Union[str, "os.PathLike[str]"]


class JsonLinesSink:
    """An ``audit`` for :class:`~mcp_provenance.asgi.ProvenanceMiddleware`: appends each
    account's line (one line of JSON, as the filter made it) and a line break to the file at
    ``path``, made owner-only (``0o600``) if missing.

    - **One write per line.** Each line goes in one ``write`` on a descriptor opened with
      ``O_APPEND``: the lines of every thread and every worker process appending to the same
      file stay whole and never interleave (on a local file system; not on NFS).
    - **Safe under rotation.** The file is opened anew for each line, by its path as it was
      when the sink was made (absolute): once ``logrotate`` (or anyone) renames it, the next
      line makes a new file there; no line is lost, none goes to the renamed file after the
      rename. No signal, no ``copytruncate`` needed.
    - **Fails loud.** A line that cannot be written whole raises ``OSError``, so the
      middleware refuses the body (fail closed); :meth:`healthy` says so until a line is
      written again. Made, the sink opens the file once, so that a path it cannot write fails
      now, with :class:`~mcp_provenance.ProvenanceValueError` code ``unwritable-audit``, not on
      the first request.

    >>> JsonLinesSink("/nonexistent-folder/audit.jsonl")
    Traceback (most recent call last):
    ...
    mcp_provenance.errors.ProvenanceValueError: the audit file /nonexistent-folder/audit.jsonl cannot be written: No such file or directory
    """

    __slots__ = ("path", "_failed")

    def __init__(self, path: PathLike) -> None:
        #: Where the file is, made absolute when the sink was made (wherever the process is later).
        self.path = os.path.abspath(os.fspath(path))
        self._failed: Optional[str] = None
        try:
            self._append(b"")
        except OSError as bad:
            raise ProvenanceValueError(f"the audit file {self.path} cannot be written: {bad.strerror or bad}",
                                       "unwritable-audit") from bad

    def __call__(self, account: Account, line: str) -> None:
        """Appends ``line`` and a line break, in one write; raises ``OSError`` when it cannot."""
        data = line.encode("utf-8") + b"\n"
        try:
            self._append(data)
        except OSError as bad:
            self._failed = type(bad).__name__
            raise
        self._failed = None

    def healthy(self) -> bool:
        """Whether the sink can keep a line now: the last line was written (or none was tried
        yet), and the file opens to append. After a failed write it stays unhealthy until a
        line is written again (a full disk lets the file open, not a line be written).

        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> audit = JsonLinesSink(os.path.join(folder, "audit.jsonl"))
        >>> audit.healthy()
        True
        >>> os.remove(audit.path); os.mkdir(audit.path)  # a folder where the file was: even root cannot write it
        >>> audit.healthy()
        False
        """
        if self._failed is not None:
            return False
        try:
            self._append(b"")
        except OSError:
            return False
        return True

    def _append(self, data: bytes) -> None:
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            written = os.write(descriptor, data) if data else 0
        finally:
            os.close(descriptor)
        if written != len(data):
            raise OSError(f"{self.path}: {written} of {len(data)} bytes written")

    def __repr__(self) -> str:
        return f"JsonLinesSink({self.path!r})"
