"""Entry point for `python -m tritoninspect`."""

from tritoninspect.cli import main

if __name__ == "__main__":
    main()
