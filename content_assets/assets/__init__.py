"""The pipeline's assets, one per stage of the registry (content_core.pipeline.all_stages(): the
built-in stages and the installed plug-ins'), in pipeline order; each table's checks run in its
asset's step."""

from content_assets.assets._result import ROWS_CURRENT as ROWS_CURRENT
from content_assets.assets._result import ROWS_WRITTEN as ROWS_WRITTEN
from content_assets.assets.stages import stage_asset
from content_core.pipeline import all_stages

ALL_ASSETS = [stage_asset(stage) for stage in all_stages()]
