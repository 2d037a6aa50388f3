"""The exceptions of mcp-provenance: each carries a stable ``code``.

A call that cannot run raises :class:`ProvenanceTypeError` when its input is
not of the kind it needs (not a request, not JSON) and
:class:`ProvenanceValueError` when an option is out of range; both are a
:class:`ProvenanceError`. Messages name the place and the expected type,
never a value sent, so they can be logged.

>>> from mcp_provenance import stamp_initiator
>>> try:
...     stamp_initiator([1, 2])
... except TypeError as error:
...     print(error.code)
not-a-request
"""

from __future__ import annotations


class ProvenanceError(Exception):
    """What every exception of the package is; ``code`` is stable and kebab-case."""

    code: str

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class ProvenanceTypeError(ProvenanceError, TypeError):
    """The input is not of the kind the call needs (the npm package's ``TypeError``)."""


class ProvenanceValueError(ProvenanceError, ValueError):
    """An option, limit or argument is out of range (the npm package's ``RangeError``)."""
