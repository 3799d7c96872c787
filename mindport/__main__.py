"""`python -m mindport` (as `python -m mindport.cli` and the `mindport` script): a user without the script on PATH
types the package's name."""
import sys

from mindport.cli import main

sys.exit(main())
