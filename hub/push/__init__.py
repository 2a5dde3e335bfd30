"""Push notifications: task push configs, their delivery to webhooks (throttled, retried),
and the SSRF guard every caller-supplied URL passes (`UrlGuard`, kept in `hub.client.guard`
since partners added at run time pass it too, and re-exported here).

`PushNotifier` is what the server uses: config create / get / list / delete, and the task
observer that queues a notification for every committed change of a task with configs.
"""

from hub.client.guard import CheckedUrl, Resolver, UrlGuard, WebhookUrl, resolve_host
from hub.push.config import NOTIFICATION_TOKEN_HEADER, PushTarget, accept_config, notification_body
from hub.push.delivery import WebhookDelivery
from hub.push.notifier import LIVE_STATES, PushNotifier
from hub.push.sender import PushSender

__all__ = [
    "LIVE_STATES",
    "NOTIFICATION_TOKEN_HEADER",
    "CheckedUrl",
    "PushNotifier",
    "PushSender",
    "PushTarget",
    "Resolver",
    "UrlGuard",
    "WebhookDelivery",
    "WebhookUrl",
    "accept_config",
    "notification_body",
    "resolve_host",
]
