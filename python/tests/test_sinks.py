"""The JSON-lines file sink (:class:`mcp_provenance.sinks.JsonLinesSink`): several processes
appending at once, the file renamed under them (as ``logrotate`` does), every line whole and
none lost; a path given as the middleware's ``audit``; its health."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import tempfile
import unittest
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

from asgi_apps import Recorder, exchange
from mcp_provenance import ProvenanceValueError
from mcp_provenance.asgi import ProvenanceMiddleware
from mcp_provenance.sinks import JsonLinesSink

WRITERS = 4
LINES = 300
#: How long a wait for the writers may take, at most, on a busy machine (not a measure of speed).
PATIENCE = 120


def writer(path: str, number: int, halfway: Any, rotated: Any) -> None:
    """Appends ``LINES`` lines through a sink of its own, some of them large (up to 96 KiB,
    more than a pipe or a page holds); halfway, says so and waits for the rotation."""
    sink = JsonLinesSink(path)
    for index in range(LINES):
        if index == LINES // 2:
            halfway.release()
            rotated.wait(PATIENCE)
        pad = "x" * (index * 331 % 98_304)
        sink({}, json.dumps({"writer": number, "index": index, "pad": pad}, separators=(",", ":")))


def lines(path: Path) -> List[str]:
    return path.read_bytes().decode("utf-8").split("\n") if path.exists() else []


class SeveralWriters(unittest.TestCase):
    def test_processes_appending_through_a_rotation_keep_every_line_whole_and_lose_none(self) -> None:
        folder = Path(tempfile.mkdtemp())
        path = folder / "audit.jsonl"
        spawn = multiprocessing.get_context("spawn")
        halfway, rotated = spawn.Semaphore(0), spawn.Event()
        writers = [spawn.Process(target=writer, args=(str(path), number, halfway, rotated)) for number in range(WRITERS)]
        for process in writers:
            process.start()
        try:
            # The first writer halfway: the others are writing still, as the file is renamed.
            self.assertTrue(halfway.acquire(timeout=PATIENCE))
            os.rename(path, folder / "audit.jsonl.1")
            rotated.set()
        finally:
            for process in writers:
                process.join(PATIENCE)
        self.assertEqual([process.exitcode for process in writers], [0] * WRITERS)
        seen: Set[Tuple[int, int]] = set()
        for name in ("audit.jsonl.1", "audit.jsonl"):
            read = lines(folder / name)
            # Each file ends with a line break: no line is cut.
            self.assertEqual(read[-1], "", name)
            self.assertGreater(len(read), 1, f"{name} got no line")
            for line in read[:-1]:
                entry: Dict[str, Any] = json.loads(line)
                self.assertEqual(entry["pad"], "x" * (entry["index"] * 331 % 98_304))
                key = (entry["writer"], entry["index"])
                self.assertNotIn(key, seen)
                seen.add(key)
        self.assertEqual(seen, {(number, index) for number in range(WRITERS) for index in range(LINES)})

    def test_lines_written_after_the_rename_make_a_new_file(self) -> None:
        folder = Path(tempfile.mkdtemp())
        sink = JsonLinesSink(folder / "audit.jsonl")
        sink({}, '{"n":1}')
        os.rename(folder / "audit.jsonl", folder / "audit.jsonl.1")
        sink({}, '{"n":2}')
        self.assertEqual((folder / "audit.jsonl.1").read_text(), '{"n":1}\n')
        self.assertEqual((folder / "audit.jsonl").read_text(), '{"n":2}\n')
        self.assertEqual(os.stat(folder / "audit.jsonl").st_mode & 0o777, 0o600)


class Health(unittest.TestCase):
    def test_unhealthy_when_the_file_cannot_be_opened_or_the_last_line_failed(self) -> None:
        folder = Path(tempfile.mkdtemp())
        sink = JsonLinesSink(folder / "audit.jsonl")
        self.assertTrue(sink.healthy())
        # A folder where the file was: no one, root included, can append to it.
        os.remove(sink.path)
        os.mkdir(sink.path)
        self.assertFalse(sink.healthy())
        with self.assertRaises(OSError):
            sink({}, "{}")
        os.rmdir(sink.path)
        # The file can be opened again, but the last line was lost: unhealthy until one is written.
        self.assertFalse(sink.healthy())
        sink({}, "{}")
        self.assertTrue(sink.healthy())


class APathForAudit(unittest.TestCase):
    def test_a_path_given_as_audit_is_the_file_sink(self) -> None:
        folder = Path(tempfile.mkdtemp())
        for given in (str(folder / "text.jsonl"), folder / "pathlike.jsonl"):
            with self.subTest(given=type(given).__name__):
                app = Recorder()
                guarded = ProvenanceMiddleware(app, audit=given, policy={"userIntent": "redact"})
                self.assertTrue(Path(given).exists(), "opened when the middleware is made")
                asyncio.run(exchange(guarded, b'{"jsonrpc":"2.0","id":1,"method":"ping"}'))
                written = [json.loads(line) for line in Path(given).read_text(encoding="utf-8").splitlines()]
                self.assertEqual([line["kind"] for line in written], ["request", "outcome"])
                self.assertEqual(written[0]["message"], {"jsonrpc": "2.0", "id": 1, "method": "ping"})

    def test_a_path_that_cannot_be_written_is_refused_when_the_middleware_is_made(self) -> None:
        folder = Path(tempfile.mkdtemp())
        with self.assertRaises(ProvenanceValueError) as bad:
            ProvenanceMiddleware(Recorder(), audit=folder / "absent" / "audit.jsonl")
        self.assertEqual(bad.exception.code, "unwritable-audit")
        self.assertEqual(str(bad.exception),
                         f"the audit file {folder / 'absent' / 'audit.jsonl'} cannot be written: No such file or directory")

    def test_a_line_that_cannot_be_written_refuses_the_body(self) -> None:
        folder = Path(tempfile.mkdtemp())
        app = Recorder()
        guarded = ProvenanceMiddleware(app, audit=folder / "audit.jsonl")
        os.remove(folder / "audit.jsonl")
        os.mkdir(folder / "audit.jsonl")
        answer = asyncio.run(exchange(guarded, b'{"jsonrpc":"2.0","id":1,"method":"ping"}'))
        self.assertEqual(app.reached, [])
        self.assertEqual(json.loads(answer.body)["error"]["data"]["code"], "audit-failed")


if __name__ == "__main__":
    unittest.main()
