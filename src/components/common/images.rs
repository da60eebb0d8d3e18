//! Image references as the chart's image helper prints them.

use serde_json::Value;

use crate::tmpl::{percent_s, print, truthy};

/// An image reference from an image block (`repository`, `tag`, `digest`, `useDigest`,
/// `override`): `override` wins, else `repository[:tag][@digest]`, each part printed with
/// `printf "%s"` as the chart's helper does (so an unset digest prints Go's `%!s(<nil>)`).
pub fn image(block: &Value) -> String {
    let over = &block["override"];
    if truthy(over) {
        return percent_s(over);
    }
    let mut s = percent_s(&block["repository"]);
    let tag = &block["tag"];
    if truthy(tag) {
        s.push(':');
        s.push_str(&print(tag));
    }
    if truthy(&block["useDigest"]) {
        s.push('@');
        s.push_str(&percent_s(&block["digest"]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_references() {
        assert_eq!(
            image(
                &json!({"repository": "quay.io/cilium/cilium", "tag": "v1.18.0", "useDigest": true, "digest": "sha256:ab"})
            ),
            "quay.io/cilium/cilium:v1.18.0@sha256:ab"
        );
        assert_eq!(
            image(&json!({"repository": "r", "tag": "", "useDigest": false})),
            "r"
        );
        assert_eq!(
            image(&json!({"override": "x/y:z", "repository": "r"})),
            "x/y:z"
        );
    }
}
