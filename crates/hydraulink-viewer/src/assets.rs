//! The page's files, embedded in the binary (`include_bytes!`), so a plain `cargo build` gives
//! a viewer that works offline. three.js is vendored unmodified under `assets/vendor/three/`
//! (MIT licence kept; re-vendored by hand with `scripts/vendor_three.sh`).

/// An embedded file: its URL path, content type and bytes.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    /// URL path (`/viewer.js`).
    pub path: &'static str,
    /// HTTP content type.
    pub content_type: &'static str,
    /// The file.
    pub bytes: &'static [u8],
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file the page loads.
pub const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../assets/index.html"),
    },
    Asset {
        path: "/viewer.js",
        content_type: JS,
        bytes: include_bytes!("../assets/viewer.js"),
    },
    Asset {
        path: "/hud.js",
        content_type: JS,
        bytes: include_bytes!("../assets/hud.js"),
    },
    Asset {
        path: "/game.js",
        content_type: JS,
        bytes: include_bytes!("../assets/game.js"),
    },
    Asset {
        path: "/hud.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../assets/hud.css"),
    },
    Asset {
        path: "/vendor/three/build/three.module.js",
        content_type: JS,
        bytes: include_bytes!("../assets/vendor/three/build/three.module.js"),
    },
    Asset {
        path: "/vendor/three/build/three.core.js",
        content_type: JS,
        bytes: include_bytes!("../assets/vendor/three/build/three.core.js"),
    },
    Asset {
        path: "/vendor/three/examples/jsm/controls/OrbitControls.js",
        content_type: JS,
        bytes: include_bytes!("../assets/vendor/three/examples/jsm/controls/OrbitControls.js"),
    },
    Asset {
        path: "/vendor/three/LICENSE",
        content_type: "text/plain; charset=utf-8",
        bytes: include_bytes!("../assets/vendor/three/LICENSE"),
    },
];

/// The asset at a URL path (query string ignored).
pub fn find(path: &str) -> Option<&'static Asset> {
    let path = path.split('?').next().unwrap_or(path);
    let path = if path == "/index.html" { "/" } else { path };
    ASSETS.iter().find(|a| a.path == path)
}
