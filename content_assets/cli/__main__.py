"""`python -m content_assets.cli`: the `content-pipeline` command."""

import sys

from content_assets.cli import main

sys.exit(main())
