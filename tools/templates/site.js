// The course website's own script; tools/build_site.py copies it into _static.
//
// The sidebar buttons. pydata-sphinx-theme (0.17 and later) binds its sidebar buttons with
// querySelector(".primary-toggle") and (".secondary-toggle"): with sphinx-book-theme there are
// two of each, and the one it binds is hidden, so the visible ones did nothing, on a phone too
// (pydata-sphinx-theme issue 2451). Here a visible button opens its sidebar as the theme's
// dialog where the sidebar is not on screen (narrow windows), and hides or shows it where it
// stands beside the page. A page with no contents (the home page) shows no contents button.
const WIDE = {primary: "(min-width: 960px)", secondary: "(min-width: 1200px)"};

function fixSidebarButtons() {
  for (const side of ["primary", "secondary"]) {
    const buttons = [...document.querySelectorAll(`.${side}-toggle`)];
    const sidebar = document.getElementById(`pst-${side}-sidebar`);
    if (!sidebar || !sidebar.querySelector("a, nav")) {
      buttons.forEach((button) => { button.style.display = "none"; });
      continue;
    }
    const [bound, ...others] = buttons;
    for (const button of others) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        if (window.matchMedia(WIDE[side]).matches) {
          document.body.classList.toggle(`course-hide-${side}`);
        } else {
          bound.click();  // the button the theme listens to: it opens the dialog
        }
      });
    }
  }
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", fixSidebarButtons);
} else {
  fixSidebarButtons();
}
