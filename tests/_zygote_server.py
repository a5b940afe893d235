"""The zygote's own code (see tests/_zygote.py): import what every CLI run imports, then fork a child per request.

Run as `python -c "exec(open(THIS).read())" SOCKET` (so `sys.path[0]` is '', as for `python -c`, and this folder,
tests/, is not on the children's path). Per connection: one JSON line {argv, cwd, env, out, err}; a waiter process
forks the child, answers its pid, then its raw wait status, one line each. The child returns out of `_serve` and
runs the request as `python -m MODULE` or `python SCRIPT` would: module code, atexit handlers and the
interpreter's exit code are the real ones. The zygote ends when its stdin (a pipe from the test process) closes.

The child ends as the interpreter ends a program, up to its teardown (`_end`): the uncaught exception printed,
non-daemon threads joined, atexit handlers run, stdout and stderr flushed, the exit code or the re-raised
SIGINT; then `os._exit`. The teardown left out frees every object, and in a forked child that copies each page
it touches of the zygote's heap: 0.4 s of a 0.5 s run. Objects still open at exit are not finalised (a file
the program never closed is not flushed): the fresh runs (TRITONINSPECT_TESTS_FRESH=1) do that as Python does.
"""

import atexit
import builtins
import gc
import json
import os
import runpy
import select
import signal
import socket
import sys
import tempfile
import threading
import traceback
import types

# What every end-to-end run imports (torch, Dynamo, Inductor, Triton, the capture layer: ~8 s of a 15 s run).
import torch  # noqa: F401
import torch._dynamo  # noqa: F401
import torch._inductor.compile_fx  # noqa: F401
import triton  # noqa: F401

import tritoninspect.capture.session  # noqa: F401
import tritoninspect.cli  # noqa: F401


def _serve(path):
    gc.freeze()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the waiters
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        readable, _, _ = select.select([server, sys.stdin], [], [])
        if sys.stdin in readable:  # the test process closed the pipe (or died): done
            os._exit(0)
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            request = _wait_for_child(conn)
            if request is not None:
                return request
        conn.close()


def _wait_for_child(conn):
    """In the waiter: fork the child (which gets the request back), report its pid and how it ended."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    request = json.loads(conn.makefile("r").readline())
    pid = os.fork()
    if pid == 0:
        conn.close()
        return request
    conn.sendall(f"{pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    conn.sendall(f"{status}\n".encode())
    os._exit(0)


def _become(request):
    """The child: the process `subprocess.run(argv, cwd=..., env=..., capture_output=True)` would have started."""
    os.setsid()  # its own group: a timeout kills it and whatever it started
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # gettempdir() caches: read $TMPDIR again
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    for fd, name in ((1, "out"), (2, "err")):
        os.dup2(os.open(request[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    argv = request["argv"]
    if argv[0] == "-m":
        sys.path[0] = request["cwd"]  # as `python -m` puts the working directory first
        sys.argv = [argv[1], *argv[2:]]  # runpy sets argv[0] to the module's file
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        script = os.path.abspath(argv[0])  # `python SCRIPT`: its folder first on the path, its __file__ absolute
        sys.path[0] = os.path.dirname(script)
        sys.argv = list(argv)  # as given (runpy.run_path would make argv[0] absolute)
        main = types.ModuleType("__main__")
        main.__file__, main.__builtins__ = script, builtins
        sys.modules["__main__"] = main
        with open(script, "rb") as f:
            code = compile(f.read(), script, "exec")
        exec(code, main.__dict__)


def _end(request):
    """Run the request and end as CPython's `Py_RunMain` and `Py_FinalizeEx` would, short of the teardown."""
    code, interrupted = 0, False
    try:
        _become(request)
    except SystemExit as exc:  # as _Py_HandleSystemExit: None is 0, an int itself, anything else printed, 1
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        code, interrupted = 1, isinstance(exc, KeyboardInterrupt)
    threading._shutdown()  # non-daemon threads first, then atexit, as Py_FinalizeEx does
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            traceback.print_exc()
            code = code or 120  # Python's exit code when flushing stdout fails at exit
    if interrupted:  # an uncaught KeyboardInterrupt ends the process by SIGINT (bpo-1054041)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


_end(_serve(sys.argv[1]))
