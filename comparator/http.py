"""HTTP rules every response follows whatever produced it (the site, the API, the admin), as project plumbing.

HEAD is GET without the body (RFC 9110 9.3.2): Django's development server drops a HEAD answer's body itself, but
WSGI servers such as gunicorn send what the application returns, so a HEAD answer with a body breaks the next
request on a kept-alive connection (the client reads the body as the start of the next answer).
"""

from __future__ import annotations


class HeadWithoutBodyMiddleware:
    """Answers HEAD with the headers GET would send and no body: the Content-Length of the body it would have (a
    streamed one keeps the length it states, a file's, or none: its rows are never read, and the server's closing of
    the response still closes the stream, freeing what it holds, an export slot). Outermost, so the length is the
    one sent after compression. The view sees a GET, so every route that answers GET answers HEAD the same way, whatever
    methods its decorators list."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method != "HEAD":
            return self.get_response(request)
        request.method = "GET"
        response = self.get_response(request)
        if response.streaming:
            response.streaming_content = []  # the stream's own close stays registered with the response
        else:
            response["Content-Length"] = str(len(response.content))
            response.content = b""
        return response
