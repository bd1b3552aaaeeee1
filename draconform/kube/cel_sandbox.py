"""Entry point of the CEL sandbox child process (see `cel._Sandbox`): evaluates selectors that can grow
values without bound, under a memory cap, for a parent that can kill it at a deadline."""

import sys

from draconform.kube.cel import SANDBOX_MEMORY, serve_sandbox

if __name__ == "__main__":
    serve_sandbox(int(sys.argv[1]) if len(sys.argv) > 1 else SANDBOX_MEMORY)
