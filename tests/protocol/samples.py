"""Realistic 1.0 objects, and their 0.3 wire form, shared by the protocol tests."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from hub import protocol as v1

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR").decode()
WHEN = datetime(2025, 10, 28, 10, 30, 0, 250_000, tzinfo=UTC)
WHEN_WIRE = "2025-10-28T10:30:00.250Z"


def text_part() -> v1.Part:
    return v1.Part(text="Summarise the attached report", metadata={"lang": "en"})


def bytes_part() -> v1.Part:
    return v1.Part(raw=PNG, filename="chart.png", media_type="image/png")


def uri_part() -> v1.Part:
    return v1.Part(
        url="https://files.example.com/report.pdf",
        filename="report.pdf",
        media_type="application/pdf",
    )


def object_data_part() -> v1.Part:
    return v1.Part(data={"rows": [{"region": "emea", "total": 12}], "complete": True})


def user_message() -> v1.Message:
    return v1.Message(
        message_id="msg-user-1",
        context_id="ctx-1",
        task_id="task-1",
        role=v1.Role.USER,
        parts=[text_part(), bytes_part(), uri_part(), object_data_part()],
        metadata={"trace": "abc"},
        extensions=["https://example.com/ext/citations/v1"],
        reference_task_ids=["task-0"],
    )


def agent_message(text: str = "Here is the summary") -> v1.Message:
    return v1.Message(
        message_id="msg-agent-1",
        context_id="ctx-1",
        task_id="task-1",
        role=v1.Role.AGENT,
        parts=[v1.Part(text=text)],
    )


def report_artifact() -> v1.Artifact:
    return v1.Artifact(
        artifact_id="art-1",
        name="summary",
        description="The report in five lines",
        parts=[v1.Part(text="Revenue grew."), v1.Part(data=[1, 2, 3])],
        metadata={"pages": 1},
        extensions=["https://example.com/ext/citations/v1"],
    )


def completed_task() -> v1.Task:
    return v1.Task(
        id="task-1",
        context_id="ctx-1",
        status=v1.TaskStatus(
            state=v1.TaskState.COMPLETED, message=agent_message("done"), timestamp=WHEN
        ),
        artifacts=[report_artifact()],
        history=[user_message(), agent_message()],
        metadata={"skill": "summarise"},
    )


def stream_events() -> list[v1.StreamResponse]:
    """One run of a streamed task: every kind of stream item, in order."""
    submitted = v1.Task(
        id="task-1",
        context_id="ctx-1",
        status=v1.TaskStatus(state=v1.TaskState.SUBMITTED, timestamp=WHEN),
        history=[user_message()],
    )

    def status(state: v1.TaskState, message: v1.Message | None = None) -> v1.StreamResponse:
        return v1.StreamResponse(
            status_update=v1.TaskStatusUpdateEvent(
                task_id="task-1",
                context_id="ctx-1",
                status=v1.TaskStatus(state=state, message=message, timestamp=WHEN),
                metadata={"seq": 1},
            )
        )

    chunk = v1.StreamResponse(
        artifact_update=v1.TaskArtifactUpdateEvent(
            task_id="task-1",
            context_id="ctx-1",
            artifact=report_artifact(),
            append=True,
            last_chunk=True,
        )
    )
    return [
        v1.StreamResponse(task=submitted),
        status(v1.TaskState.WORKING),
        chunk,
        status(v1.TaskState.INPUT_REQUIRED, agent_message("Which quarter?")),
        status(v1.TaskState.COMPLETED),
        v1.StreamResponse(message=agent_message()),
    ]


def token_push_config(task_id: str | None = "task-1") -> v1.TaskPushNotificationConfig:
    return v1.TaskPushNotificationConfig(
        id="cfg-token", task_id=task_id, url="https://hooks.example.com/a2a", token="opaque-123"
    )


def auth_push_config(task_id: str | None = "task-1") -> v1.TaskPushNotificationConfig:
    return v1.TaskPushNotificationConfig(
        id="cfg-auth",
        task_id=task_id,
        url="https://hooks.example.com/a2a",
        authentication=v1.AuthenticationInfo(scheme="Bearer", credentials="s3cret"),
    )


def v1_card_document(*, with_v03_interface: bool = True) -> dict[str, Any]:
    """A 1.0 card with every security scheme kind, as JSON."""
    interfaces = [
        {
            "url": "https://hub.example.com/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        },
        {
            "url": "https://hub.example.com",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0",
        },
    ]
    if with_v03_interface:
        interfaces.append(
            {
                "url": "https://hub.example.com/a2a",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "0.3",
            }
        )
    return {
        "name": "Hub",
        "description": "Routes work to partner agents",
        "version": "2.1.0",
        "supportedInterfaces": interfaces,
        "provider": {"organization": "Example Org", "url": "https://example.com"},
        "documentationUrl": "https://docs.example.com/hub",
        "iconUrl": "https://example.com/icon.png",
        "capabilities": {
            "streaming": True,
            "pushNotifications": True,
            "extensions": [
                {
                    "uri": "https://example.com/ext/citations/v1",
                    "description": "Cites sources",
                    "required": False,
                    "params": {"style": "apa"},
                }
            ],
            "extendedAgentCard": True,
        },
        "securitySchemes": {
            "apiKey": {
                "apiKeySecurityScheme": {
                    "description": "Key in a header",
                    "location": "header",
                    "name": "X-API-Key",
                }
            },
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "oauth": {
                "oauth2SecurityScheme": {
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "https://auth.example.com/authorize",
                            "tokenUrl": "https://auth.example.com/token",
                            "refreshUrl": "https://auth.example.com/refresh",
                            "scopes": {"tasks:write": "Create tasks"},
                        }
                    },
                    "oauth2MetadataUrl": "https://auth.example.com/.well-known/oauth",
                }
            },
            "oidc": {
                "openIdConnectSecurityScheme": {
                    "openIdConnectUrl": "https://auth.example.com/.well-known/openid-configuration"
                }
            },
            "mtls": {"mtlsSecurityScheme": {"description": "Client certificate"}},
        },
        "securityRequirements": [
            {"schemes": {"oauth": {"list": ["tasks:write"]}}},
            {"schemes": {"apiKey": {"list": []}}},
        ],
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "summarise",
                "name": "Summarise",
                "description": "Summarises documents",
                "tags": ["text", "summary"],
                "examples": ["Summarise this PDF"],
                "inputModes": ["application/pdf"],
                "outputModes": ["text/plain"],
                "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
            },
            {"id": "echo", "name": "Echo", "description": "Says it back", "tags": ["test"]},
        ],
        "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2lnbmF0dXJl"}],
    }


def v03_card_document() -> dict[str, Any]:
    """A 0.3 card (as a 0.3 agent publishes it) with every security scheme kind."""
    return {
        "protocolVersion": "0.3.0",
        "name": "Recipe Agent",
        "description": "Finds recipes",
        "url": "https://recipes.example.com/a2a/v1",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": "https://recipes.example.com/a2a/v1", "transport": "JSONRPC"},
            {"url": "https://recipes.example.com/a2a/rest", "transport": "HTTP+JSON"},
        ],
        "version": "1.4.0",
        "provider": {"organization": "Kitchen Inc", "url": "https://kitchen.example.com"},
        "capabilities": {
            "streaming": True,
            "pushNotifications": False,
            "stateTransitionHistory": True,
            "extensions": [{"uri": "https://example.com/ext/units/v1"}],
        },
        "securitySchemes": {
            "apiKey": {"type": "apiKey", "in": "query", "name": "key"},
            "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            "oauth": {
                "type": "oauth2",
                "description": "Kitchen SSO",
                "flows": {
                    "clientCredentials": {
                        "tokenUrl": "https://auth.kitchen.example.com/token",
                        "scopes": {"recipes:read": "Read recipes"},
                    },
                    "password": {
                        "tokenUrl": "https://auth.kitchen.example.com/token",
                        "scopes": {},
                    },
                },
            },
            "oidc": {
                "type": "openIdConnect",
                "openIdConnectUrl": "https://auth.kitchen.example.com/.well-known/openid-configuration",
            },
            "mtls": {"type": "mutualTLS"},
        },
        "security": [{"oauth": ["recipes:read"]}, {"mtls": []}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {
                "id": "find",
                "name": "Find recipe",
                "description": "Finds a recipe by ingredients",
                "tags": ["cooking"],
                "security": [{"bearer": []}],
            }
        ],
        "supportsAuthenticatedExtendedCard": False,
    }
