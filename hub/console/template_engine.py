"""The console's Jinja engine, built when the first page is rendered.

Importing Jinja and Litestar's plugin for it costs a server that serves no console page yet
(most start-ups, and every hub whose console nobody opens) about 20 ms before its first
request; the first console page pays it instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from litestar.template import TemplateEngineProtocol

if TYPE_CHECKING:
    from jinja2 import Template
    from litestar.plugins.jinja import JinjaTemplateEngine

__all__ = ["DeferredJinjaEngine"]


class DeferredJinjaEngine(TemplateEngineProtocol["Template", Mapping[str, Any]]):
    """Litestar's Jinja engine over the console's templates (autoescaped, strict about
    undefined names), made on first use."""

    def __init__(self) -> None:
        self._engine: JinjaTemplateEngine | None = None

    def _built(self) -> JinjaTemplateEngine:
        if self._engine is None:
            from jinja2 import Environment, PackageLoader, StrictUndefined
            from litestar.plugins.jinja import JinjaTemplateEngine

            environment = Environment(
                loader=PackageLoader("hub.console", "templates"),
                autoescape=True,
                undefined=StrictUndefined,
                trim_blocks=True,
                lstrip_blocks=True,
            )
            self._engine = JinjaTemplateEngine.from_environment(environment)
        return self._engine

    def get_template(self, template_name: str) -> Template:
        return self._built().get_template(template_name)

    def render_string(self, template_string: str, context: Mapping[str, Any]) -> str:
        return self._built().render_string(template_string, context)

    def register_template_callable(self, key: str, template_callable: Callable[..., Any]) -> None:
        self._built().register_template_callable(key, template_callable)
