"""``python -m service`` is ``donjon``."""

import sys

from service.run.cli import main

sys.exit(main())
