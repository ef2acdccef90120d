// The matches page refreshes itself: every data-refresh-ms it asks the server for the same
// page with If-None-Match; a 304 costs nothing, a new version replaces the listing.
"use strict";

(() => {
  const body = document.body;
  const every = Number(body.dataset.refreshMs || 0);
  if (!every) return;
  let etag = body.dataset.etag || "";

  async function refresh() {
    if (document.hidden) return;
    let response;
    try {
      response = await fetch(location.href,
        { cache: "no-store", headers: etag ? { "If-None-Match": etag } : {} });
    } catch (err) {
      return;  // the server is away: the list stays as it was, the next ask may succeed
    }
    body.dataset.asked = String(Number(body.dataset.asked || 0) + 1);
    if (response.status !== 200) return;  // 304: nothing changed
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = page.getElementById("listing");
    if (!fresh) return;
    document.getElementById("listing").replaceChildren(...fresh.childNodes);
    etag = response.headers.get("ETag") || "";
    body.dataset.etag = etag;
    body.dataset.refreshes = String(Number(body.dataset.refreshes || 0) + 1);
  }

  setInterval(refresh, every);
})();
