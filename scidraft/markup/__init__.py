"""SciDraft's rendering engine: pure Python, no models. See pipeline.render."""

from .context import (
    DEFAULT_ENVIRONMENTS,
    Bibliography,
    EnvironmentKind,
    FormattedReferences,
    ReferenceTarget,
    RenderContext,
    UnavailableBibliography,
)
from .pipeline import ENGINE_VERSION, render
from .rendered import CitationList, Rendered, RenderWarning

__all__ = [
    "DEFAULT_ENVIRONMENTS",
    "ENGINE_VERSION",
    "Bibliography",
    "CitationList",
    "EnvironmentKind",
    "FormattedReferences",
    "ReferenceTarget",
    "RenderContext",
    "RenderWarning",
    "Rendered",
    "UnavailableBibliography",
    "render",
]
