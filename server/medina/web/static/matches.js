// The matches page refreshes itself: every data-refresh-ms it asks the server for the same
// page with If-None-Match; a 304 costs nothing, a new version replaces the listing.
"use strict";

(() => {
  const body = document.body;
  const every = Number(body.dataset.refreshMs || 0);
  if (!every) return;
  let etag = body.dataset.etag || "";
  // Said while the server does not answer: the list below is what it was, states included
  // ("running" may be long over), so a spectator must not take it for the present.
  const away = document.createElement("p");
  away.id = "away";
  away.className = "note";
  away.hidden = true;
  const listing = document.getElementById("listing");
  if (listing && listing.parentNode) listing.parentNode.insertBefore(away, listing);
  let awaySince = "";

  function unreachable(why) {
    if (!awaySince) awaySince = new Date().toLocaleTimeString();
    away.textContent = `${why} since ${awaySince}: the list below may be out of date; ` +
      `asking again every ${Math.round(every / 1000)} s`;
    away.hidden = false;
  }

  async function refresh() {
    if (document.hidden) return;
    let response;
    try {
      response = await fetch(location.href,
        { cache: "no-store", headers: etag ? { "If-None-Match": etag } : {} });
    } catch (err) {
      unreachable("the server cannot be reached");  // the next ask may succeed
      return;
    }
    body.dataset.asked = String(Number(body.dataset.asked || 0) + 1);
    if (response.status !== 200 && response.status !== 304) {
      unreachable(`the server answers ${response.status}`);
      return;
    }
    away.hidden = true;
    awaySince = "";
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
