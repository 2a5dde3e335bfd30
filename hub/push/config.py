"""Push notification configs as the hub accepts and delivers them.

A config is checked when it arrives, so nothing a caller sends can break a header or a REST
path later: the id is a path segment, the token and credentials are header values, the
scheme is an HTTP token. A config sent without an id is kept under the task's id (as the SDK
does, and as a 0.3 `tasks/pushNotificationConfig/get` without a config id expects).
"""

from __future__ import annotations

import re

from hub.client.guard import WebhookUrl
from hub.errors import InvalidParamsError
from hub.protocol import AuthenticationInfo, StreamResponse, Task, TaskPushNotificationConfig
from hub.protocol.v03.translate import task_to_v03
from hub.store import PushConfigRecord

__all__ = ["NOTIFICATION_TOKEN_HEADER", "PushTarget", "accept_config", "notification_body"]

NOTIFICATION_TOKEN_HEADER = "X-A2A-Notification-Token"

# RFC 3986 path-segment characters, without percent escapes: the id is part of REST paths.
_CONFIG_ID = re.compile(r"^[A-Za-z0-9._~:@!$&'()*+,;=-]{1,256}$")
# RFC 9110 token: an authentication scheme such as Bearer or Basic.
_SCHEME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$")
# A header value on one line: visible ASCII, spaces and tabs (no CR, LF or NUL).
_HEADER_VALUE = re.compile(r"^[\x20-\x7e\t]{1,4096}$")


def accept_config(
    config: TaskPushNotificationConfig, *, task_id: str
) -> TaskPushNotificationConfig:
    """The config as the hub keeps it: `task_id` and `id` set, `tenant` dropped, the token
    and credentials checked as header values. The URL is checked by the `UrlGuard`.

    Raises:
        InvalidParamsError: the id, token or authentication cannot be used.
    """
    violations: list[tuple[str, str]] = []
    config_id = config.id or task_id
    if not _CONFIG_ID.match(config_id):
        violations.append(("id", "1 to 256 letters, digits or ._~:@!$&'()*+,;=- characters"))
    if config.token is not None and not _HEADER_VALUE.match(config.token):
        violations.append(("token", "1 to 4096 printable ASCII characters on one line"))
    authentication = config.authentication
    if authentication is not None:
        if not _SCHEME.match(authentication.scheme):
            violations.append(
                ("authentication.scheme", "an HTTP authentication scheme such as Bearer")
            )
        credentials = authentication.credentials
        if credentials is not None and not _HEADER_VALUE.match(credentials):
            violations.append(
                ("authentication.credentials", "1 to 4096 printable ASCII characters on one line")
            )
    if violations:
        summary = "; ".join(f"{field}: {problem}" for field, problem in violations)
        raise InvalidParamsError(
            f"invalid push notification config: {summary}", violations=violations
        )
    return TaskPushNotificationConfig(
        id=config_id,
        task_id=task_id,
        url=config.url.strip(),
        token=config.token,
        authentication=None
        if authentication is None
        else AuthenticationInfo(
            scheme=authentication.scheme, credentials=authentication.credentials
        ),
    )


def notification_body(task: Task, protocol: str) -> bytes:
    """What a webhook receives: a `StreamResponse` holding the task, or for a config created
    through 0.3, the bare 0.3 `Task` (what 0.3 servers sent)."""
    if protocol == "0.3":
        return task_to_v03(task).to_json()
    return StreamResponse(task=task).to_json()


class PushTarget:
    """One config that receives a task's notifications, as the sender uses it.

    `active` turns False when the config is deleted: deliveries (and their retries) check it
    before every attempt, so nothing is sent to a deleted config.
    """

    __slots__ = ("active", "record", "url")

    def __init__(self, record: PushConfigRecord, url: WebhookUrl) -> None:
        self.record = record
        self.url = url
        self.active = True

    @property
    def task_id(self) -> str:
        return self.record.task_id

    @property
    def config_id(self) -> str:
        return self.record.config_id

    def headers(self) -> dict[str, str]:
        """`Content-Type`, and the token and `Authorization` headers the config asks for."""
        config = self.record.config
        headers = {"Content-Type": "application/json"}
        if config.token:
            headers[NOTIFICATION_TOKEN_HEADER] = config.token
        auth = config.authentication
        # A scheme without credentials gives nothing to send (the SDK sends nothing either).
        if auth is not None and auth.credentials:
            headers["Authorization"] = f"{auth.scheme} {auth.credentials}"
        return headers
