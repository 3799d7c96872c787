"""`python -m mindport.cli`."""
import sys

from mindport.cli import main

sys.exit(main())
