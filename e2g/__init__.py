"""e2g: where was this commit reviewed? Links git commits to mailing-list postings."""

__version__ = "0.1.0"
