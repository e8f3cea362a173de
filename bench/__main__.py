"""`python -m bench`: see bench/benchmark.py."""

from bench.benchmark import main

raise SystemExit(main())
