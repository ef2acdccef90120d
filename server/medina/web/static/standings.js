'use strict';
/**
 * A live table of standings (a ladder's): every few seconds the page is fetched again and
 * its table and note replace the shown ones, so the ranks move as the ladder plays. Works
 * without it: the page itself is complete when served.
 */
(function () {
  const EVERY_MS = 5000;

  /**
   * @param {Document} fresh
   * @param {string} id
   */
  function swap(fresh, id) {
    const now = document.getElementById(id);
    const next = fresh.getElementById(id);
    if (now && next && now.innerHTML !== next.innerHTML) {
      now.innerHTML = next.innerHTML;
    }
  }

  async function refresh() {
    try {
      const response = await fetch(window.location.href, { headers: { Accept: 'text/html' } });
      if (response.ok) {
        const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
        swap(fresh, 'standings');
        swap(fresh, 'standings-note');
      }
    } catch (err) {
      // The server may be restarting: the next round tries again.
    }
    window.setTimeout(refresh, EVERY_MS);
  }

  if (document.body.dataset.live === 'standings') {
    window.setTimeout(refresh, EVERY_MS);
  }
})();
