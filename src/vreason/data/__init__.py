"""Data: benchmark loaders, video import (manifests and path conventions) and preflight."""
