# Schemathesis hooks for test/integration/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).
# POST /v2/scrape fetches its URL while the client waits, and a page that cannot be fetched is a 500 with a SCRAPE_*
# code, as Firecrawl answers. So every generated scrape targets the local fixture page and the other fields stay
# fuzzed: options, formats, selectors, headers and timeouts meet a real page. Schemathesis re-judges the edited case
# (valid or not) before it checks the answer.
import os

import schemathesis

PAGE = os.environ["TRAWL_FUZZ_SCRAPE_URL"]


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    # the synchronous fetches: a scrape, and a map (which fetches its start page and sitemaps while the client waits)
    if case.operation.method.upper() == "POST" and case.operation.path in ("/v2/scrape", "/v2/map") and isinstance(case.body, dict) and isinstance(case.body.get("url"), str):
        case.body["url"] = PAGE
