"""`python -m iclr25` is the same as the `iclr25` command."""

from iclr25.cli import main

raise SystemExit(main())
