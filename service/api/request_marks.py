"""What a request leaves in its WSGI environ for the outermost layer (service/api/metrics.py
Measured), which counts, times and logs it once answered: the route template, the request id,
who asked and the problem answered, set by whichever path served it (Flask's or the hot
path's)."""

from __future__ import annotations

ROUTE = "vegas.route"
REQUEST_ID = "vegas.request_id"
ACTOR = "vegas.actor"
PROBLEM = "vegas.problem"
#: A request no route matched (a 404, a 405): one label for all, whatever the path.
UNMATCHED = "unmatched"
