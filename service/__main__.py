"""``python -m service`` is ``donjon``."""

import sys

from service.cli import main

sys.exit(main())
