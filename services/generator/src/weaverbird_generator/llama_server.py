"""Runs llama.cpp's OpenAI-compatible HTTP server via xllamacpp, in-process or as a child process."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO, Any

log = logging.getLogger(__name__)

# The child prints exactly one line starting with this to stdout once /health is OK; everything else
# (llama.cpp's own log) goes to stderr, so the parent can read the real port even when it asked for 0.
_READY_PREFIX = "WEAVERBIRD_LLAMA_READY "


class LlamaServerError(RuntimeError):
    """The llama.cpp server could not be started or did not become healthy in time."""


def _health_ok(base_url: str, timeout: float = 2.0, path: str = "/health", api_key: str | None = None) -> bool:
    try:
        # 127.0.0.1 only, so no proxy: an HTTP(S)_PROXY in the environment must not intercept the probe.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        request = urllib.request.Request(f"{base_url}{path}", headers=_auth_headers(api_key))
        with opener.open(request, timeout=timeout) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        # 503 while the model loads arrives as HTTPError, a subclass of URLError.
        return False


def _auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _prefer_passive_openmp() -> None:
    """Sets OMP_WAIT_POLICY=PASSIVE if it is still in time to matter (see LlamaServer's docstring)."""
    if "OMP_WAIT_POLICY" in os.environ:
        return  # an explicit choice by whoever deploys us wins
    if "xllamacpp" in sys.modules:
        # libgomp reads its environment once, when the library is loaded by `import xllamacpp`.
        log.warning("xllamacpp was imported before OMP_WAIT_POLICY was set; OpenMP threads will spin")
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


class LlamaServer:
    """llama.cpp's server on 127.0.0.1 exposing /health and /v1/chat/completions.

    `in_process=True` (default) runs it inside this Python process through `xllamacpp.Server`;
    `in_process=False` runs `python -m weaverbird_generator.llama_server` as a child process, which
    isolates native crashes and keeps model loading (GIL held 2-8 s for Qwen) and stopping (GIL held
    up to ~30 s when a stream is in flight) from freezing this process; prefer it inside a gRPC service.
    `ctx_size` is the context window of each request (slot); llama.cpp divides its total `n_ctx` among
    the `parallel` slots, so the total is set to `ctx_size * parallel`.

    Threads: the CPU wheel uses OpenMP, whose threads spin at every barrier by default. When other
    processes want the same cores, a spinning thread that gets descheduled stalls all the others:
    Qwen2.5-1.5B decoding on 2 threads of this 2-core box fell to 0.8-3.4 tokens/s while other services
    were busy, against 9-17.5 tokens/s with OMP_WAIT_POLICY=PASSIVE (7-14 with one thread). Hence
    `passive_wait=True`, which sets OMP_WAIT_POLICY=PASSIVE unless the environment already sets it.

    Weight layout: llama.cpp can repack quantized weights at load into interleaved CPU layouts ("extra
    buffer types"). On this 2-core AVX2 box that made Qwen2.5-1.5B Q4_K_M read prompts *slower*
    (32-37 tokens/s against 38-45 without; decode ~10 tokens/s either way; `python -m
    benchmarks.prompt_reading`), and prompt reading is the time to first token here. Hence
    `repack_weights=False`; other CPUs (AVX-512, ARM) may gain from it, so it stays a setting.

    `api_key`: llama.cpp then answers every endpoint but /health with 401 unless the
    request carries `Authorization: Bearer <key>`, so another local user or a page in a browser
    cannot use the model, read /slots (the prompts in flight) or /metrics. The generator mints one
    per start and keeps it in memory; a child gets it on its stdin, never on its command line.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        ctx_size: int = 4096,
        n_threads: int = 0,
        n_threads_batch: int = 0,
        parallel: int = 1,
        in_process: bool = True,
        startup_timeout_s: float = 180.0,
        log_verbosity: int = 2,
        passive_wait: bool = True,
        repack_weights: bool = False,
        api_key: str | None = None,
    ) -> None:
        if api_key is not None and (not api_key or any(c.isspace() for c in api_key)):
            raise ValueError("api_key must be a non-empty string without whitespace")
        self.api_key = api_key
        self.model_path = Path(model_path)
        self.host = host
        self.requested_port = port
        self.ctx_size = ctx_size
        # 0 = every core; llama.cpp's own default (-1) would also pick all cores, but say it explicitly.
        self.n_threads = n_threads if n_threads > 0 else (os.cpu_count() or 1)
        # Prompt processing (batch) and token generation can use different thread counts; see the class
        # docstring for why fewer generation threads can be much faster on a busy machine.
        self.n_threads_batch = n_threads_batch if n_threads_batch > 0 else self.n_threads
        self.parallel = parallel
        self.in_process = in_process
        self.startup_timeout_s = startup_timeout_s
        self.log_verbosity = log_verbosity
        self.passive_wait = passive_wait
        self.repack_weights = repack_weights
        self._server: Any = None  # xllamacpp.Server when in-process
        self._proc: subprocess.Popen[str] | None = None
        self._base_url: str | None = None
        self.load_seconds: float | None = None

    # --- public API ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT of the running server (without /v1)."""
        if self._base_url is None:
            raise LlamaServerError("llama.cpp server is not running; call start() first")
        return self._base_url

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    @property
    def running(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        return self._server is not None

    def start(self) -> LlamaServer:
        """Loads the model and returns once /health and /slots answer 200; raises LlamaServerError otherwise."""
        if self._base_url is not None:
            return self
        if not self.model_path.is_file():
            raise LlamaServerError(f"model file {self.model_path} does not exist")
        started = time.monotonic()
        deadline = started + self.startup_timeout_s
        if self.in_process:
            self._start_in_process()
        else:
            self._start_child(deadline)
        try:
            self._wait_healthy(deadline)
        except BaseException:
            self.stop()
            raise
        self.load_seconds = time.monotonic() - started
        log.info(
            "llama.cpp server ready url=%s model=%s load_s=%.2f in_process=%s",
            self._base_url,
            self.model_path.name,
            self.load_seconds,
            self.in_process,
        )
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stops the server; safe to call twice or after a failed start."""
        self._base_url = None
        if self._server is not None:
            server, self._server = self._server, None
            # xllamacpp has no stop(): ~Server() ends the main loop and closes the socket, and it runs
            # when the last reference goes; ours was the only one. It holds the GIL, and with a stream
            # still in flight it sometimes takes ~30 s (measured: 2 of 5 tries), freezing this process.
            del server
        if self._proc is not None:
            proc, self._proc = self._proc, None
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout_s)
                except subprocess.TimeoutExpired:
                    log.warning("llama.cpp child pid=%d ignored SIGTERM; killing it", proc.pid)
                    proc.kill()
                    proc.wait(timeout_s)
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- internals ----------------------------------------------------------------------------

    def _params(self) -> Any:
        # Deferred: importing loads a 100 MB native library that a child-mode parent never needs.
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(self.model_path)
        params.hostnames = [self.host]
        params.port = self.requested_port  # 0 = let the OS choose; read back from listening_address
        params.n_parallel = self.parallel
        params.n_ctx = self.ctx_size * self.parallel
        params.no_extra_bufts = not self.repack_weights  # see the class docstring
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads_batch
        params.offline = True  # never reach for a model hub, whatever the params say
        params.ui = False  # the bundled web UI is useless here and one more thing to serve
        params.endpoint_slots = True  # start() probes /slots to know the main loop runs
        params.endpoint_metrics = True  # Prometheus /metrics: requests processing and deferred (queued)
        params.verbosity = self.log_verbosity
        if self.api_key is not None:
            params.api_keys = [self.api_key]
        return params

    def _start_in_process(self) -> None:
        if self.passive_wait:
            _prefer_passive_openmp()
        import xllamacpp

        try:
            # Blocks until the model is loaded, holding the GIL throughout (measured: other Python threads
            # barely run), so a gRPC server in this process stalls for the load time.
            self._server = xllamacpp.Server(self._params())
        except RuntimeError as e:
            # xllamacpp's message is generic; llama.cpp logged the real cause (bad file, busy port) to stderr.
            raise LlamaServerError(
                f"llama.cpp could not start with {self.model_path} on {self.host}:{self.requested_port}: {e} "
                "(the cause is in llama.cpp's log on stderr)"
            ) from e
        self._base_url = str(self._server.listening_address).rstrip("/")

    def _start_child(self, deadline: float) -> None:
        cmd = [
            sys.executable,
            "-m",
            "weaverbird_generator.llama_server",
            "--model",
            str(self.model_path),
            "--host",
            self.host,
            "--port",
            str(self.requested_port),
            "--ctx-size",
            str(self.ctx_size),
            "--threads",
            str(self.n_threads),
            "--threads-batch",
            str(self.n_threads_batch),
            "--parallel",
            str(self.parallel),
            "--log-verbosity",
            str(self.log_verbosity),
            "--exit-on-stdin-eof",
        ]
        if self.repack_weights:
            cmd.append("--repack-weights")
        if self.api_key is not None:
            cmd.append("--api-key-stdin")
        # stdin stays open as a lifeline: if this process dies, even by SIGKILL, the child sees EOF and exits.
        env = dict(os.environ)
        if self.passive_wait:
            env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, text=True, bufsize=1, env=env
        )
        assert self._proc.stdout is not None and self._proc.stdin is not None
        if self.api_key is not None:
            self._proc.stdin.write(self.api_key + "\n")
            self._proc.stdin.flush()
        line = _readline_until(self._proc.stdout, deadline)
        if line is None or not line.startswith(_READY_PREFIX):
            code = self._proc.poll()
            self.stop()
            reason = f"exited with code {code}" if code is not None else "timed out"
            raise LlamaServerError(
                f"llama.cpp child for {self.model_path} {reason} before it was ready (its log is on stderr)"
            )
        self._base_url = json.loads(line[len(_READY_PREFIX) :])["base_url"]

    def _wait_healthy(self, deadline: float) -> None:
        assert self._base_url is not None
        # /health is answered by the HTTP thread alone; /slots is a task through the main loop. Waiting
        # for both matters in-process: ~Server() right after start, before the main loop runs, can wait
        # for it forever (reproduced: 1 hang in 13 start/stop cycles before this wait, 0 in 60 after).
        while True:
            if _health_ok(self._base_url) and _health_ok(self._base_url, path="/slots", api_key=self.api_key):
                return
            if self._proc is not None and self._proc.poll() is not None:
                raise LlamaServerError(f"llama.cpp child exited with code {self._proc.returncode}")
            if time.monotonic() >= deadline:
                raise LlamaServerError(
                    f"llama.cpp server at {self._base_url} not healthy after {self.startup_timeout_s:.0f}s"
                )
            time.sleep(0.1)


def _readline_until(stream: IO[str], deadline: float) -> str | None:
    """One line from a child's stdout, or None on EOF or when the deadline passes."""
    fd = stream.fileno()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
        if ready:
            # The child writes the ready line in one print with flush, so readline will not block long.
            line = stream.readline()
            return line.rstrip("\n") if line else None


# --- foreground entry point ---------------------------------------------------------------------


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m weaverbird_generator.llama_server",
        description="Serve a GGUF model with llama.cpp (OpenAI-compatible /v1/chat/completions).",
    )
    ap.add_argument("--model", required=True, help="smollm2, qwen2.5-coder-1.5b or a path to a .gguf file")
    ap.add_argument("--cache-dir", default="var/models", help="where qwen2.5-coder-1.5b is assembled")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = a free port, printed once ready")
    ap.add_argument("--ctx-size", type=int, default=4096, help="context window per request (slot)")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads generating tokens; 0 = all cores")
    ap.add_argument("--threads-batch", type=int, default=0, help="CPU threads reading the prompt; 0 = --threads")
    ap.add_argument("--parallel", type=int, default=1, help="concurrent requests (slots)")
    ap.add_argument(
        "--repack-weights", action="store_true", help="let llama.cpp repack weights for this CPU (slower on AVX2)"
    )
    ap.add_argument("--log-verbosity", type=int, default=2, help="llama.cpp log level: 1 errors .. 4 debug")
    ap.add_argument(
        "--api-key-stdin",
        action="store_true",
        help="read an API key from the first line of stdin; then every request but /health needs it as a Bearer token",
    )
    ap.add_argument("--exit-on-stdin-eof", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Runs the server in the foreground until SIGINT or SIGTERM."""
    from weaverbird_generator.model_files import ModelNotAvailable, ensure_model

    args = _parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    try:
        model_path = ensure_model(args.model, Path(args.cache_dir))
    except ModelNotAvailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    api_key = sys.stdin.readline().strip() if args.api_key_stdin else None
    if args.api_key_stdin and not api_key:
        print("error: --api-key-stdin but no key on stdin", file=sys.stderr)
        return 2
    stop = threading.Event()

    def _on_signal(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)

    server = LlamaServer(
        model_path,
        port=args.port,
        host=args.host,
        ctx_size=args.ctx_size,
        n_threads=args.threads,
        n_threads_batch=args.threads_batch,
        parallel=args.parallel,
        in_process=True,
        log_verbosity=args.log_verbosity,
        repack_weights=args.repack_weights,
        api_key=api_key,
    )
    try:
        server.start()
    except LlamaServerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    if args.exit_on_stdin_eof:

        def _watch_stdin() -> None:
            # Blocks until the parent closes our stdin or dies; either way we should go.
            with contextlib.suppress(OSError, ValueError):
                sys.stdin.read()
            stop.set()

        threading.Thread(target=_watch_stdin, name="stdin-watch", daemon=True).start()

    print(_READY_PREFIX + json.dumps({"base_url": server.base_url, "model": str(model_path)}), flush=True)
    # Short waits keep the main thread responsive to signals (Event.wait without a timeout is not).
    while not stop.wait(0.5):
        pass
    # Exit without ~Server(): with a stream in flight it can block for ~30 s holding the GIL, and a
    # process that is going away has nothing to flush; the kernel closes the socket at once.
    log.info("llama.cpp server at %s exiting", server.base_url)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
