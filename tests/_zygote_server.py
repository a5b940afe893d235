"""The zygote's own code (see tests/_zygote.py): import what every CLI run imports, then fork a child per request.

Run as `python -c "exec(open(THIS).read())" SOCKET` (so `sys.path[0]` is '', as for `python -c`, and this folder,
tests/, is not on the children's path). Per connection: one JSON line {argv, cwd, env, out, err}; a waiter process
forks the child, answers its pid, then its raw wait status, one line each. The child returns out of `_serve` and
runs the request as `python -m MODULE` or `python SCRIPT` would: module code, atexit handlers and the
interpreter's exit code are the real ones. The zygote ends when its stdin (a pipe from the test process) closes.
"""

import builtins
import json
import os
import runpy
import select
import signal
import socket
import sys
import tempfile
import types

# What every end-to-end run imports (torch, Dynamo, Inductor, Triton, the capture layer: ~8 s of a 15 s run).
import torch  # noqa: F401
import torch._dynamo  # noqa: F401
import torch._inductor.compile_fx  # noqa: F401
import triton  # noqa: F401

import tritoninspect.capture.session  # noqa: F401
import tritoninspect.cli  # noqa: F401


def _serve(path):
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


_become(_serve(sys.argv[1]))
