"""`Hub` and the app `create_app` builds run one core, assembled in `hub.assembly`: what the
app refuses or applies, the hub in a script refuses or applies too; and a task resumed after
a restart acts with the rights a request of its owner's credential would have."""

from __future__ import annotations

import uuid
from dataclasses import replace

import httpx
import pytest
from asgi_lifespan import LifespanManager

from hub.app import create_app
from hub.assembly import resume_scope
from hub.config import AuthSettings, CardSettings, FederationSettings, Settings, StoreSettings
from hub.errors import ExtensionSupportRequiredError
from hub.protocol import Task, TaskState, TaskStatus
from hub.protocol.trace import EVERY, CallScope, use_scope
from hub.registry import Registry
from hub.runtime import Hub
from hub.server.auth import Authenticator
from hub.skills import SkillContext, skill
from hub.store import MemoryTaskStore, TaskRecord

pytestmark = pytest.mark.anyio

SECRET = "https://example.com/extensions/secret/v2"


@skill(id="payroll", description="Pays whoever is named.")
async def payroll(ctx: SkillContext) -> str:
    return f"paid {ctx.text}"


def payroll_settings() -> Settings:
    """A hub whose `payroll` skill requires the SECRET extension of every message to it."""
    card = CardSettings.model_validate(
        {"extensions": [{"uri": SECRET, "required": True, "skills": ["payroll"]}]}
    )
    return Settings(store=StoreSettings(kind="memory"), card=card)


async def test_a_skill_whose_extension_a_call_did_not_activate_is_refused_by_hub_and_app() -> None:
    hub = Hub(payroll_settings(), skills=[payroll], registry=Registry())
    app = hub.asgi_app()
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "Ada"}]}
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://hub") as http,
    ):
        over_http = await http.post(
            "/message:send", json={"message": message}, headers={"A2A-Version": "1.0"}
        )

    async with hub:
        with pytest.raises(ExtensionSupportRequiredError) as in_script:
            await hub.tools["skill_payroll"].call(message="Ada")
        with use_scope(replace(CallScope.new(), extensions=frozenset({SECRET}))):
            activated = await hub.tools["skill_payroll"].call(message="Ada")

    assert over_http.status_code == 400
    reason = over_http.json()["error"]["details"][0]["reason"]
    assert reason == in_script.value.reason == "EXTENSION_SUPPORT_REQUIRED"
    assert in_script.value.metadata == {"extensions": SECRET}
    assert (activated.state, activated.text) == ("completed", "paid Ada")


def test_an_app_given_no_partners_follows_the_federation_settings_as_a_hub_does() -> None:
    settings = Settings(
        store=StoreSettings(kind="memory"),
        federation=FederationSettings(anonymous=("spawn_agent",), max_agents=3),
    )
    app = create_app(settings, store=MemoryTaskStore(), skills={"payroll": payroll})
    served = app.state.hub.observability.partners.federation
    scripted = Hub(settings, registry=Registry()).partners.federation

    assert (served.anonymous, served.max_agents) == (frozenset({"spawn_agent"}), 3)
    assert (scripted.anonymous, scripted.max_agents) == (served.anonymous, served.max_agents)


async def test_a_resumed_task_gets_the_scope_its_owners_credential_gives_a_request() -> None:
    auth = AuthSettings.model_validate(
        {
            "enabled": True,
            "credentials": [
                {"name": "alice", "api_key": "alice-key-0123456789", "agents": ["helper"]},
                {"name": "bob", "api_key": "bob-key-0123456789", "skills": ["echo"]},
            ],
        }
    )
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    authenticator = Authenticator(auth, skills=["echo"])

    for owner, secret in (("alice", "alice-key-0123456789"), ("bob", "bob-key-0123456789")):
        resumed = resume_scope(auth, TaskRecord(task=task, skill="echo", owner=owner))
        requested = (await authenticator.identify({"x-api-key": secret})).scope(CallScope.new())
        assert resumed is not None
        assert (resumed.caller, resumed.skills, resumed.agents) == (
            requested.caller,
            requested.skills,
            requested.agents,
        )
    # Owners no credential names any more: the task cannot resume.
    assert resume_scope(auth, TaskRecord(task=task, skill="echo", owner="carol")) is None
    assert resume_scope(auth, TaskRecord(task=task, skill="echo", owner="")) is None
    # Auth off: every caller is the anonymous one, who reaches every partner.
    anyone = resume_scope(AuthSettings(), TaskRecord(task=task, skill="echo", owner="alice"))
    assert anyone is not None
    assert (anyone.caller, anyone.skills, anyone.agents) == ("", None, EVERY)
