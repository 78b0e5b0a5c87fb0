"""The input paths: every function that takes text or bytes from outside and parses, renders
or decodes it, with the bounds that hold its work, in one registry.

An input path's entry function carries `@input_path(name)`; the registry says what it may cost
per call (CPU seconds of the whole process, V8's threads included, and memory in MB, measured
after expansion) and which settings or constants bound it. tests/hostile/ feeds each path
growing hostile inputs and holds it to those numbers; tests/scidraft/test_bounds.py checks that
the decorated functions, this registry, the harness and docs/security.md name the same paths,
and that every function shaped like a parser is either registered or accounted for here.

Model-free and import-free: any module may import it without a cycle.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

KB = 1024
MB = 1024 * 1024


@dataclass(frozen=True)
class Bound:
    """One limit on a path: what it limits, the setting or constant that holds the number
    (a name in django.conf.settings, or a dotted module constant) and its default, and the
    function that enforces it."""

    limit: str
    setting: str
    default: object
    enforced: str


@dataclass(frozen=True)
class InputPath:
    name: str
    entry: str  # the decorated function, dotted
    description: str
    # What one call may cost at worst, whatever the input: CPU seconds of the process (every
    # thread: V8 runs in threads of its own) and growth of its peak memory in MB.
    cpu_seconds: float
    memory_mb: float
    bounds: tuple[Bound, ...]
    # Functions shaped like parsers (see PARSER_NAME) that only this path's entry calls: the
    # harness reaches them through it.
    reaches: tuple[str, ...] = ()


def _paths(*paths: InputPath) -> dict[str, InputPath]:
    return {path.name: path for path in paths}


INPUT_PATHS = _paths(
    InputPath(
        "markdown-body",
        "scidraft.markup.pipeline.render",
        "A note's or page's Markdown body, rendered for readers, the preview and the feeds.",
        cpu_seconds=5.0,
        memory_mb=512,
        bounds=(
            Bound("body size in UTF-8", "NOTE_BODY_MAX_BYTES", 2 * MB,
                  "scidraft.markup.pipeline.render"),
            Bound("CPU time of the stages before fill", "scidraft.markup.limits.RENDER_SECONDS",
                  1.0, "scidraft.markup.limits.budget"),
            Bound("time waiting on KaTeX and pseudocode.js",
                  "scidraft.markup.limits.ENGINE_SECONDS", 1.5,
                  "scidraft.markup.limits.charge_engine"),
            Bound("container nesting (lists, quotes)", "scidraft.markup.limits.MAX_NESTING", 32,
                  "scidraft.markup.deep_blocks.refuse_deep_blocks"),
            Bound("Markdown token nesting", "scidraft.markup.convert.MAX_TOKEN_NESTING", 144,
                  "scidraft.markup.convert"),
            Bound("HTML element nesting", "scidraft.markup.nesting.MAX_DEPTH", 100,
                  "scidraft.markup.nesting.limit_nesting"),
            Bound("placeholders in one render", "scidraft.markup.limits.MAX_ITEMS", 20_000,
                  "scidraft.markup.stash.Stash"),
            Bound("lines of one algorithm", "scidraft.markup.limits.MAX_ALGORITHM_LINES", 2_000,
                  "scidraft.markup.code"),
            Bound("the render's time budget, in percent (a render past it is not final)",
                  "RENDER_TIME_PERCENT", 100, "scidraft.markup.limits"),
            Bound("changed previews a user asks for a window", "EDITOR_PREVIEW_LIMIT", 60,
                  "editor.previews"),
            Bound("warnings kept", "scidraft.markup.limits.MAX_WARNINGS", 500,
                  "scidraft.markup.limits.cap_warnings"),
        ),
        reaches=("scidraft.markup.attributes.parse",),
    ),
    InputPath(
        "tex-math",
        "scidraft.markup.jsengine.render_tex",
        "One formula's TeX, typeset by KaTeX in V8 (inline, display and environments).",
        # A call is stopped at CALL_TIMEOUT_SECONDS, or when V8's heap reaches
        # MEMORY_LIMIT_BYTES; the engine's own memory beside its heap makes 340 MB at most.
        cpu_seconds=6.0,
        memory_mb=384,
        bounds=(
            Bound("macro expansions per formula", "scidraft.markup.jsengine.KATEX_OPTIONS",
                  None, "KaTeX maxExpand (1,000)"),
            Bound("seconds of one V8 call", "scidraft.markup.v8pool.CALL_TIMEOUT_SECONDS", 5.0,
                  "scidraft.markup.v8pool.run"),
            Bound("V8 heap of a context, in MB", "SCIDRAFT_V8_HEAP_MB", 256,
                  "scidraft.markup.v8pool.Pool.fresh"),
        ),
    ),
    InputPath(
        "math-macros",
        "scidraft.markup.preambles.preamble_macros",
        "The site's and a note's math macros (a preamble of \\newcommand and \\def).",
        cpu_seconds=5.0,
        memory_mb=128,
        bounds=(
            Bound("preamble size in characters", "scidraft.markup.mathmacros.MAX_PREAMBLE_CHARS",
                  10_000, "scidraft.markup.preambles.preamble_macros"),
            Bound("definitions in one render", "scidraft.markup.mathmacros.MAX_DEFINITIONS", 500,
                  "scidraft.markup.mathmacros.admit"),
            Bound("characters of definitions in one render",
                  "scidraft.markup.mathmacros.MAX_DEFINITIONS_CHARS", 40_000,
                  "scidraft.markup.mathmacros.admit"),
        ),
    ),
    InputPath(
        "bib-text",
        "bibliography.parsing.parse_bibtex",
        "A .bib file's text: uploaded, pasted, imported from a Hugo site or the command line.",
        # parse_seconds: 2 s a MB, at least 1 s; the 10 MB file limit makes it 20 s at most.
        cpu_seconds=22.0,
        memory_mb=512,
        bounds=(
            Bound("file size", "SCIDRAFT_BIB_MAX_BYTES", 10 * MB,
                  "bibliography.services.bib_size_check"),
            Bound("CPU seconds a MB of text (at least RENDER_SECONDS)",
                  "bibliography.parsing.PARSE_SECONDS_PER_MB", 2.0,
                  "bibliography.parsing.parse_bibtex"),
            Bound("characters of one entry", "bibliography.pybtex_reader.MAX_ENTRY_CHARS", 2 * MB,
                  "bibliography.parsing._too_big"),
            Bound("brace groups of one entry", "bibliography.parsing.MAX_BRACE_GROUPS", 20_000,
                  "bibliography.parsing._too_big"),
            Bound("names of one person field", "bibliography.pybtex_reader.MAX_PERSONS", 10_000,
                  "bibliography.pybtex_reader.CollectingParser"),
            Bound("characters one value expands to (a field, an @string)",
                  "bibliography.pybtex_reader.MAX_FIELD_CHARS", 2 * MB,
                  "bibliography.pybtex_reader.BoundedScanner"),
            Bound("characters all values of a parse expand to, per character of the file",
                  "bibliography.parsing.EXPANSION_FACTOR", 2,
                  "bibliography.pybtex_reader.BoundedScanner"),
        ),
        reaches=("bibliography.services.bib_parse",),
    ),
    InputPath(
        "csl-style-name",
        "bibliography.csl.style_info",
        "A CSL style name: the site setting, or a reference list's `style` argument.",
        cpu_seconds=0.5,
        memory_mb=32,
        bounds=(
            Bound("style name: a shipped file's name, at most 151 characters",
                  "bibliography.csl._NAME", None, "bibliography.csl.style_exists"),
            Bound("style descriptions kept", "bibliography.csl.style_info", None,
                  "functools.lru_cache(maxsize=512)"),
            Bound("distinct styles a render names besides the site's",
                  "CITATION_STYLES_PER_NOTE", 3, "scidraft.markup.citations._cap_styles"),
            Bound("styles one V8 context builds", "bibliography.processor.STYLES_PER_CONTEXT", 4,
                  "bibliography.processor._prepare"),
        ),
    ),
    InputPath(
        "hugo-tree",
        "hugosite.reading.read_site",
        "A Hugo site folder: its config, front matter (YAML or TOML) and files, when imported.",
        cpu_seconds=5.0,
        memory_mb=256,
        bounds=(
            Bound("each note body read", "NOTE_BODY_MAX_BYTES", 2 * MB,
                  "hugosite.importing (through notes.services)"),
            Bound("each .bib read", "SCIDRAFT_BIB_MAX_BYTES", 10 * MB,
                  "bibliography.services.bib_size_check"),
            Bound("values of one front matter or data file, YAML aliases expanded",
                  "hugosite.front_matter.MAX_VALUES", 100_000,
                  "hugosite.front_matter.expanded_size_check"),
            Bound("nesting of one front matter or data file", "hugosite.front_matter.MAX_DEPTH", 64,
                  "hugosite.front_matter.expanded_size_check"),
        ),
        reaches=(
            "hugosite.front_matter.split_front_matter",
            "hugosite.front_matter.parse_date",
            "hugosite.site_config.read_config",
            "hugosite.front_matter.jsonable",
            "hugosite.front_matter.expanded_size_check",
            "hugosite.content.math_macros",
            "hugosite.content.note_from_front_matter",
            "hugosite.content.page_from_front_matter",
            "hugosite.site_config.site_config_from_mapping",
        ),
    ),
    InputPath(
        "image-bytes",
        "images.services.image_check",
        "An uploaded image's bytes, checked by content before they are stored.",
        # A WebP at the pixel limit is decoded whole, one at a time (DECODES_AT_ONCE): libwebp
        # and Pillow's buffers took 366 MB for 24 megapixels in a fresh process.
        cpu_seconds=5.0,
        memory_mb=384,
        bounds=(
            Bound("file size", "IMAGE_UPLOAD_MAX_BYTES", 5 * MB, "images.views.SizeLimit"),
            Bound("pixels (width × height), read from the header", "IMAGE_UPLOAD_MAX_PIXELS",
                  24_000_000, "images.services.image_check"),
            Bound("whole decodes at once per process", "images.services.DECODES_AT_ONCE", 1,
                  "images.services._check_pixels"),
        ),
    ),
    InputPath(
        "live-frame",
        "collaboration.protocol.frame_read",
        "A WebSocket frame from a live editor (y-websocket's protocol).",
        cpu_seconds=0.5,
        memory_mb=32,
        bounds=(
            Bound("one message", "LIVE_MESSAGE_MAX_BYTES", 256 * KB,
                  "collaboration.consumers.NoteConsumer.receive"),
            Bound("messages a second a connection (sustained)", "LIVE_RATE_PER_SECOND", 50,
                  "collaboration.limits.TokenBucket"),
            Bound("burst a connection", "LIVE_RATE_BURST", 200,
                  "collaboration.limits.TokenBucket"),
            Bound("messages a second a note, in one app server", "LIVE_NOTE_RATE_PER_SECOND",
                  400, "collaboration.limits.TokenBucket"),
            Bound("burst a note", "LIVE_NOTE_RATE_BURST", 1000,
                  "collaboration.limits.TokenBucket"),
            Bound("editors of one note across app servers", "LIVE_NOTE_EDITORS_MAX", 32,
                  "collaboration.limits.EditorSeats"),
            Bound("connections of one person to one note", "LIVE_USER_NOTE_SEATS_MAX", 4,
                  "collaboration.limits.EditorSeats"),
            Bound("connections of one person", "LIVE_USER_SEATS_MAX", 16,
                  "collaboration.limits.EditorSeats"),
        ),
    ),
    InputPath(
        "live-awareness",
        "collaboration.protocol.awareness_read",
        "A presence (awareness) update from a live editor, relayed to the others.",
        cpu_seconds=0.5,
        memory_mb=32,
        bounds=(
            Bound("one presence message", "LIVE_AWARENESS_MAX_BYTES", 8 * KB,
                  "collaboration.consumers.NoteConsumer._presence"),
            Bound("client ids one connection speaks for",
                  "collaboration.consumers.PRESENCE_CLIENTS_MAX", 16,
                  "collaboration.consumers.NoteConsumer._presence"),
        ),
    ),
    InputPath(
        "live-update",
        "collaboration.documents.update_store",
        "A Yjs update from a live editor, applied to the note's document and stored.",
        cpu_seconds=2.0,
        memory_mb=128,
        bounds=(
            Bound("the texts after the update", "NOTE_BODY_MAX_BYTES", 2 * MB,
                  "collaboration.documents.update_store"),
            Bound("the document with the update applied (encoded)", "LIVE_DOCUMENT_MAX_BYTES",
                  8 * MB, "collaboration.documents.update_admitted"),
            Bound("a note's stored updates, in LIVE_DOCUMENT_MAX_BYTES",
                  "collaboration.documents.STORED_FACTOR", 2,
                  "collaboration.documents.update_store"),
            Bound("structs of one update", "collaboration.updates.STRUCTS_MAX", 200_000,
                  "collaboration.updates.read"),
        ),
        reaches=("collaboration.updates.read",),
    ),
    InputPath(
        "search-query",
        "notes.search.search_notes",
        "A reader's search query (the search page's `q`).",
        cpu_seconds=1.0,
        memory_mb=64,
        bounds=(
            Bound("query length in characters", "notes.search.MAX_QUERY_LENGTH", 200,
                  "notes.search.search_notes"),
            Bound("query words", "notes.search.MAX_QUERY_WORDS", 16,
                  "notes.search.query_problem"),
            Bound("characters of a note's text indexed", "SEARCH_INDEX_MAX_CHARS", 100_000,
                  "notes.search_index.indexed_text"),
            Bound("milliseconds to find the matched words of a page of results",
                  "SEARCH_HEADLINE_TIMEOUT_MS", 300, "notes.search.load_results"),
        ),
        reaches=("notes.search.tokenise",),
    ),
    InputPath(
        "shortcode-arguments",
        "scidraft.markup.shortcodes.parse",
        "Hugo shortcodes in a body and their arguments (`{{< name key=\"value\" >}}`).",
        cpu_seconds=3.0,
        memory_mb=256,
        bounds=(
            Bound("body size in UTF-8", "NOTE_BODY_MAX_BYTES", 2 * MB,
                  "scidraft.markup.pipeline.render"),
            Bound("CPU time of the stages before fill", "scidraft.markup.limits.RENDER_SECONDS",
                  1.0, "scidraft.markup.limits.budget"),
        ),
    ),
)  # fmt: skip

# A function shaped like a parser: a public function of a project module named so, or any
# public function of a module named after reading input. Each must be an entry (decorated),
# reached by one (InputPath.reaches), or listed in NOT_INPUT with the reason.
PARSER_NAME = re.compile(r"^(parse|read|decode|tokeni[sz]e|split)(_|$)|_(read|parse|decode)$")
PARSER_MODULES = ("parsing", "reading", "protocol", "search")
NOT_INPUT = {
    "bibliography.parsing.parse_seconds": "a parse's CPU budget, not a parser",
    "bibliography.parsing.expanded_chars_limit": "a parse's expansion bound, not a parser",
    "notes.search.query_problem": "words for a query past the bounds; search_notes refuses it",
    "bibliography.entries.decode_left_commands": "reads citation-js's output, not input",
    "collaboration.protocol.sync_step2": "writes a message",
    "collaboration.protocol.server_message": "writes a message",
    "collaboration.protocol.awareness_message": "writes a message",
    "editor.forms.split_list": "splits a form field already bounded by its max_length",
    "ops.backups.read_manifest": "reads the manifest of a backup this installation wrote",
    "notes.search.searchable_notes": "a queryset",
    "notes.search.capped": "counts the hits search_notes returned, already bounded",
    "notes.search.searchable_pages": "a queryset",
    "notes.search.use_full_text": "the database's vendor",
    "notes.search.search_config": "a lookup in a fixed table",
    "notes.search.load_results": "loads rows by the ids search_notes found",
    "notes.search.search_page": "the view: bounds the query, then calls search_notes",
}

Function = TypeVar("Function", bound=Callable)


def input_path(name: str) -> Callable[[Function], Function]:
    """Mark the entry function of the registered input path `name` (unknown names fail at
    import, so a new path cannot be marked without its registry entry)."""
    if name not in INPUT_PATHS:
        raise LookupError(f"{name!r} is not in scidraft.bounds.INPUT_PATHS")

    def mark(function: Function) -> Function:
        function.input_path = name
        return function

    return mark
