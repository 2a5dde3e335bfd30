"""The hub's core, assembled in one place: what serves tasks, whichever door they come in by.

`create_app` (the A2A server and its doors) and `Hub` (the hub in a script) both run a
`HubCore` made by `build_core`: the partners (`build_partners`) and, on a shared store, their
sync with the other replicas; the toolbox the local skills are bound to; the task manager
with its delegation ledger and the skills' extension requirements; and the push notifier
when the hub serves push configs. Neither builds or orders these parts itself, so the two
cannot drift apart.

`HubCore.running()` is the one start-up order, and its reverse on shut-down:

1. open the store;
2. the partners (their HTTP client is closed last of all), agents.yaml followed for edits;
3. the sync of runtime partners with the shared store (replicas);
4. the push notifier, before the task manager, so the tasks its recovery fails are reported;
5. the task manager: recovery of the tasks a previous run left (resumable skills' run
   again, in their owner's scope: `resume_scope`), then its workers;
6. every partner's card read once (`Partners.warm`), so tool definitions are complete.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from hub.config import AuthSettings, Settings, settle_default_skill
from hub.config.callers import owner_caller
from hub.orchestrator import Orchestrator
from hub.partners import Conversations, FederationPolicy, PartnerChildren, Partners, StatsBook
from hub.partners.sync import PartnerSync, shared_partners
from hub.protocol.trace import CallScope
from hub.push import PushNotifier, Resolver
from hub.registry import Registry
from hub.skills import LocalSkill
from hub.skills.extensions import ExtensionPolicy
from hub.skills.toolbox import Toolbox
from hub.skills.tools import with_tools
from hub.store import TaskRecord, TaskStore
from hub.tasks import TaskManager

__all__ = ["HubCore", "build_core", "build_partners", "resume_scope"]


def resume_scope(auth: AuthSettings, record: TaskRecord) -> CallScope | None:
    """The call scope a task resumed after a restart runs in: a new trace, with the rights
    its owner's credential has now, as a request with that credential would (the same
    `Caller`); with auth off, every partner. None when no credential has the owner's name
    any more: the task is failed instead."""
    caller = owner_caller(auth, record.owner)
    return caller.scope(CallScope.new()) if caller is not None else None


def build_partners(settings: Settings, registry: Registry) -> Partners:
    """The partners of `registry`, under the settings' federation policy: the one place a
    hub makes its partner directory."""
    return Partners(registry, federation=FederationPolicy.from_settings(settings))


@dataclass(frozen=True, slots=True, kw_only=True)
class HubCore:
    """The parts that serve tasks, built by `build_core`; run them inside `running()`.

    Attributes:
        settings: the hub's settings, the default skill settled.
        store: where tasks are kept.
        partners: the partner agents (`ctx.agents`).
        skills: the local skills by id, each decorated one bound to `toolbox`.
        toolbox: the partners' and the local skills' tools.
        stats: the hub's call statistics per partner (the router weighs them; the console
            and /status show them).
        manager: runs the skills' tasks.
        extensions: the extensions the card declares and requires.
        push: delivers push notifications (None when the hub serves none).
        sync: keeps the runtime partners the same as the shared store's (None for a store
            of one hub).
        watch: follow agents.yaml for edits while running.
    """

    settings: Settings
    store: TaskStore
    partners: Partners
    skills: Mapping[str, LocalSkill]
    toolbox: Toolbox
    stats: StatsBook
    manager: TaskManager
    extensions: ExtensionPolicy
    push: PushNotifier | None
    sync: PartnerSync | None
    watch: bool

    @asynccontextmanager
    async def running(self, *, opened: Callable[[], None] | None = None) -> AsyncIterator[None]:
        """Run the core in the order the module describes; stop it in the reverse order.

        Args:
            opened: called once the store is open, before anything else starts.
        """
        await self.store.open()
        try:
            if opened is not None:
                opened()
            async with AsyncExitStack() as stack:
                await stack.enter_async_context(self.partners)
                if self.watch:
                    await stack.enter_async_context(self.partners.watching())
                if self.sync is not None:
                    await stack.enter_async_context(self.sync.running())
                if self.push is not None:
                    await stack.enter_async_context(self.push)
                for skill in self.skills.values():
                    # After the manager has stopped the plans: their models' HTTP clients.
                    if isinstance(skill, Orchestrator) and skill.model is not None:
                        stack.push_async_callback(skill.model.aclose)
                await stack.enter_async_context(self.manager)
                await self.partners.warm()
                yield
        finally:
            await self.store.close()


def _bind_orchestrators(
    skills: Mapping[str, LocalSkill], settings: Settings, store: TaskStore
) -> dict[str, LocalSkill]:
    """The skills, each orchestrator given the store its plans keep their journals in and
    its model of `models:`."""
    orchestrators = frozenset(
        sid for sid, skill in skills.items() if isinstance(skill, Orchestrator)
    )
    return {
        sid: skill.bound(store, settings.models, orchestrators)
        if isinstance(skill, Orchestrator)
        else skill
        for sid, skill in skills.items()
    }


def build_core(
    settings: Settings,
    *,
    skills: Mapping[str, LocalSkill],
    store: TaskStore,
    partners: Partners | None = None,
    conversations: Conversations | None = None,
    push: bool = False,
    push_resolver: Resolver | None = None,
    watch: bool = True,
) -> HubCore:
    """The hub's core for these settings, skills and store; nothing is opened yet.

    Args:
        settings: the hub's settings; left out, the default skill is the first one served.
        skills: the local skills by id.
        store: where tasks are kept.
        partners: the partner agents; none when None.
        conversations: the partner context each hub conversation continues (`delegate`);
            a map of the core's own when None.
        push: deliver push notifications when the card offers them (`card.push_notifications`):
            an app serving the A2A API, where configs are made, does; `Hub` does not.
        push_resolver: how push webhook hosts are resolved for the SSRF guard (tests inject
            one); the system resolver when None.
        watch: follow agents.yaml for edits while running.

    Raises:
        ConfigError: `default_skill` names a skill not served, or two local skills would be
            the same tool.
    """
    settings = settle_default_skill(settings, list(skills))
    partners = partners if partners is not None else build_partners(settings, Registry())
    # Replicas share the partners added at run time through their store.
    sync = shared_partners(store, partners)
    extensions = ExtensionPolicy.from_settings(settings.card.extensions)
    stats = StatsBook()
    skills = _bind_orchestrators(skills, settings, store)
    served, toolbox = with_tools(
        skills,
        partners,
        lambda: manager,
        swarm=settings.swarm,
        stats=stats,
        conversations=conversations if conversations is not None else Conversations(),
    )
    manager = TaskManager(
        store=store,
        executors=served,
        default_skill=settings.default_skill,
        limits=settings.limits,
        children=PartnerChildren(partners),
        admit_skill=extensions.admit_skill if extensions.by_skill else None,
        resume_scope=functools.partial(resume_scope, settings.auth),
    )
    notifier = None
    if push and settings.card.push_notifications:
        notifier = PushNotifier(store=store, settings=settings.push, resolver=push_resolver)
        manager.observe(notifier.observe)
    return HubCore(
        settings=settings,
        store=store,
        partners=partners,
        skills=served,
        toolbox=toolbox,
        stats=stats,
        manager=manager,
        extensions=extensions,
        push=notifier,
        sync=sync,
        watch=watch,
    )
