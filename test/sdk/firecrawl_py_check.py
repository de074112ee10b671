"""Calls every method of the official Python SDK (firecrawl-py 4.x) that a self-hosted Firecrawl answers, against a
running Trawl and a fixture site, and reports per method.

usage: firecrawl_py_check.py <trawl api url> <fixture site origin>

Exit status 1 when a method listed in SUPPORTED fails; methods in PENDING are reported but do not fail the run
(a method the server does not answer yet goes there until it lands).
"""
import json
import sys
import time
import traceback

from firecrawl import Firecrawl

SUPPORTED = [
    "scrape", "crawl", "start_crawl", "active_crawls", "get_crawl_status", "cancel_crawl", "map", "search",
    "get_credit_usage", "get_token_usage", "get_concurrency", "get_queue_status",
    "v2.get_credit_usage_historical", "v2.get_token_usage_historical",
    "batch_scrape", "start_batch_scrape", "get_batch_scrape_status", "parse", "scrape (attributes, question)", "scrape (branding)",
]
PENDING: list = []


def main() -> int:
    api, site = sys.argv[1], sys.argv[2].rstrip("/")
    fc = Firecrawl(api_key="fc-self-hosted", api_url=api)
    state: dict = {}

    def scrape():
        doc = fc.scrape(f"{site}/docs/about", formats=["markdown", "links"])
        assert "About these docs." in (doc.markdown or ""), doc.markdown
        assert doc.metadata.status_code == 200
        return f"{len(doc.markdown)} chars of markdown"

    def crawl():
        job = fc.crawl(f"{site}/docs/section-1/", limit=5, poll_interval=1, timeout=60)
        assert job.status == "completed", job.status
        assert len(job.data) == 5, len(job.data)
        return f"{len(job.data)} documents"

    def start_crawl():
        started = fc.start_crawl(f"{site}/docs/", limit=60)
        assert started.id
        state["crawl_id"] = started.id
        return started.id

    def active_crawls():
        active = fc.active_crawls()
        ids = [c.id for c in active.crawls]
        assert state["crawl_id"] in ids, ids
        return f"{len(ids)} running"

    def get_crawl_status():
        status = fc.get_crawl_status(state["crawl_id"])
        assert status.status in ("scraping", "completed"), status.status
        return f"{status.status} {status.completed}/{status.total}"

    def cancel_crawl():
        assert fc.cancel_crawl(state["crawl_id"]) is True
        return "cancelled"

    def map_():
        links = fc.map(f"{site}/docs/", limit=50).links
        urls = [link.url for link in links]
        assert f"{site}/docs/about" in urls, urls
        return f"{len(urls)} links"

    def search():
        res = fc.search("section overview", limit=3)
        web = res.web or []
        assert len(web) > 0, res
        assert web[0].url.startswith(site), web[0]
        return f"{len(web)} results, first {web[0].url}"

    def get_credit_usage():
        usage = fc.get_credit_usage()
        assert usage.remaining_credits > 0
        return f"remaining {usage.remaining_credits}"

    def get_token_usage():
        usage = fc.get_token_usage()
        assert usage.remaining_tokens >= 0
        return f"remaining {usage.remaining_tokens}"

    def get_concurrency():
        c = fc.get_concurrency()
        assert c.max_concurrency > 0
        return f"{c.concurrency}/{c.max_concurrency}"

    def get_credit_usage_historical():
        usage = fc.get_credit_usage()
        # firecrawl-py 4.52 has the historical methods on its v2 client only (not on Firecrawl itself)
        history = fc.v2.get_credit_usage_historical()
        # a fresh server: everything was used this calendar month
        assert history.success and len(history.periods) == 1, history
        assert history.periods[0].creditsUsed == usage.plan_credits - usage.remaining_credits, (history, usage)
        assert history.periods[0].startDate.endswith("-01T00:00:00.000Z"), history
        try:
            fc.v2.get_credit_usage_historical(by_api_key=True)
        except Exception as err:  # refused: usage is recorded per team
            assert "byApiKey is not supported" in str(err), err
        else:
            raise AssertionError("by_api_key=True was not refused")
        return f"{history.periods[0].creditsUsed} credits in {history.periods[0].startDate[:7]}"

    def get_token_usage_historical():
        history = fc.v2.get_token_usage_historical()
        # no model configured: no tokens, no period
        assert history.success and history.periods == [], history
        return "no tokens used"

    def get_queue_status():
        q = fc.get_queue_status()
        assert q.max_concurrency > 0
        return f"waiting {q.waiting_jobs_in_queue}, active {q.active_jobs_in_queue}, most recent success {q.most_recent_success}"

    def batch_scrape():
        job = fc.batch_scrape([f"{site}/docs/about", f"{site}/docs/section-2/"], formats=["markdown"], poll_interval=1, wait_timeout=60)
        assert job.status == "completed", job.status
        assert len(job.data) == 2, len(job.data)
        return f"{len(job.data)} documents"

    def start_batch_scrape():
        started = fc.start_batch_scrape([f"{site}/docs/section-3/"], formats=["markdown"])
        assert started.id
        state["batch_id"] = started.id
        return started.id

    def get_batch_scrape_status():
        status = fc.get_batch_scrape_status(state["batch_id"])
        assert status.status in ("scraping", "completed"), status.status
        return status.status

    def parse():
        html = b"<html><head><title>Notes</title></head><body><main><h1>Local notes</h1><p>Uploaded, never fetched.</p></main></body></html>"
        doc = fc.parse(html, filename="notes.html", content_type="text/html")
        assert "# Local notes" in (doc.markdown or ""), doc.markdown
        return f"{len(doc.markdown)} chars of markdown"

    def scrape_new_formats():
        url = f"{site}/docs/about"
        doc = fc.scrape(url, formats=["markdown", {"type": "attributes", "selectors": [{"selector": "a", "attribute": "href"}]},
                                      {"type": "question", "question": "What are these docs about?"}])
        # firecrawl-py's Document has no attributes field (the JS SDK's has): the request is accepted, the answer read
        # (empty here, with a warning: the page's one sentence is too short to answer from without an LLM)
        assert doc.answer is not None and doc.warning, doc
        return f"answer {len(doc.answer)} chars, warning: {doc.warning[:60]}"

    def scrape_branding():
        # the rendered page's computed styles (the fixture site sets none: Chromium's defaults, a light page)
        doc = fc.scrape(f"{site}/docs/about", formats=["branding"])
        b = doc.branding
        assert b is not None and b.colors and b.colors.get("background") == "#FFFFFF", b
        assert b.colors.get("textPrimary") == "#000000" and b.typography and b.fonts is not None, b
        scheme = getattr(b, "color_scheme", None) or (b.model_extra or {}).get("colorScheme")
        assert scheme == "light", b
        return f"colorScheme {scheme}, background {b.colors['background']}"

    checks = [
        ("scrape", scrape), ("crawl", crawl), ("start_crawl", start_crawl), ("active_crawls", active_crawls),
        ("get_crawl_status", get_crawl_status), ("cancel_crawl", cancel_crawl), ("map", map_), ("search", search),
        ("get_credit_usage", get_credit_usage), ("get_token_usage", get_token_usage), ("get_concurrency", get_concurrency),
        ("get_queue_status", get_queue_status), ("batch_scrape", batch_scrape), ("start_batch_scrape", start_batch_scrape),
        ("get_batch_scrape_status", get_batch_scrape_status),
        ("v2.get_credit_usage_historical", get_credit_usage_historical), ("v2.get_token_usage_historical", get_token_usage_historical),
        ("parse", parse), ("scrape (attributes, question)", scrape_new_formats), ("scrape (branding)", scrape_branding),
    ]
    failed = []
    for name, check in checks:
        started = time.monotonic()
        try:
            detail, ok = check(), True
        except Exception as err:  # report every failure, whatever its kind
            detail, ok = f"{type(err).__name__}: {err}".splitlines()[0][:300], False
            if name in SUPPORTED:
                traceback.print_exc(file=sys.stderr)
        ms = round((time.monotonic() - started) * 1000)
        print(json.dumps({"method": name, "ok": ok, "supported": name in SUPPORTED, "ms": ms, "detail": str(detail)}), flush=True)
        if not ok and name in SUPPORTED:
            failed.append(name)
    if failed:
        print(f"FAILED (supported): {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
