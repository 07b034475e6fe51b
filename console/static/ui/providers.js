// Progressive loading of big provider trees (/ui/providers/).
//
// The page renders the first rows of every tree; a ".more-link" stands for the
// rest (its href is a page of its own, so it works without JavaScript). Here each
// link is replaced by the rows it stands for, fetched as an HTML fragment, when it
// scrolls near the viewport (or is clicked). Links inside a folded subtree load
// when the subtree is opened. Fragments may carry further links: they are
// watched the same way. Loaded from a static file: the pages' CSP allows no
// inline script.
(function () {
  "use strict";

  var FRAGMENT_HEADER = "X-Placement-Fragment";

  function fragmentUrl(link) {
    var url = new URL(link.href, window.location.href);
    url.searchParams.set("fragment", "1");
    return url.toString();
  }

  function load(link) {
    if (link.classList.contains("loading")) {
      return;
    }
    var label = link.textContent;
    link.classList.add("loading");
    link.textContent = "Loading " + label + "…";
    fetch(fragmentUrl(link), {credentials: "same-origin", headers: {"Accept": "text/html"}})
      .then(function (response) {
        // A lapsed session answers with the login page: go there instead.
        if (!response.ok || !response.headers.get(FRAGMENT_HEADER)) {
          window.location.href = link.href;
          return null;
        }
        return response.text();
      })
      .then(function (html) {
        if (html === null) {
          return;
        }
        var template = document.createElement("template");
        template.innerHTML = html;
        var links = template.content.querySelectorAll("a.more-link");
        link.closest(".more").replaceWith(template.content);
        links.forEach(watch);
      })
      .catch(function () {
        link.classList.remove("loading");
        link.textContent = label + " (loading failed: click to retry)";
      });
  }

  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) {
        observer.unobserve(entry.target);
        load(entry.target);
      }
    });
  }, {rootMargin: "400px 0px"}) : null;

  function watch(link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      load(link);
    });
    if (observer) {
      observer.observe(link);
    }
  }

  document.querySelectorAll("a.more-link").forEach(watch);
})();
