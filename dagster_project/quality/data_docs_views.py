"""Great Expectations' Data Docs views with their Jinja templates compiled once, not every build.

Each Data Docs build makes new views, each with a new Jinja environment that parses and compiles
every template again: 0.25-0.4 s of every suite's validation, for HTML that does not change. These
subclasses give the environment Jinja's file-system bytecode cache (in the system's temporary
folder, one per user, files named for this project), kept across runs: a template whose source
changed (another Great Expectations version) is compiled again, since Jinja checks the source's
checksum. The site configuration names them (validation.DATA_DOCS_SITE), Great Expectations'
documented way to choose a site's views; the pages are the same (tests/test_data_docs.py).
"""

from great_expectations.render.view import DefaultJinjaIndexPageView, DefaultJinjaPageView
from jinja2 import FileSystemBytecodeCache


def _bytecode_cache() -> FileSystemBytecodeCache | None:
    try:
        return FileSystemBytecodeCache(pattern="caot-data-docs-%s.cache")
    except (OSError, RuntimeError):  # no private temporary folder: compile on every build
        return None


BYTECODE = _bytecode_cache()


class CompiledOncePageView(DefaultJinjaPageView):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.env.bytecode_cache = BYTECODE


class CompiledOnceIndexPageView(DefaultJinjaIndexPageView):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.env.bytecode_cache = BYTECODE
