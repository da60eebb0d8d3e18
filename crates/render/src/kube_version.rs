//! The target cluster's Kubernetes version as `--kube-version` (or Argo CD's `KUBE_VERSION`)
//! gives it, in the form Helm 4 holds it for `.Capabilities.KubeVersion` and the chart's
//! `kubeVersion` check: `chartutil.ParseKubeVersion` reads it with Masterminds semver
//! (`NewVersion`, a leading `v` and a missing patch allowed) and keeps semver's `String()`, so
//! `1.35` is `1.35.0` and a suffix (`1.29.4+k3s1`, `1.35.0-gke.1`) stays. Beside it, the API
//! versions the cluster serves, the other fact about the cluster a render reads.

use crate::error::RenderError;

/// The target cluster's Kubernetes version, checked once where it is named (a flag, Argo CD's
/// `KUBE_VERSION`, `kubeVersion` in cilium-cmp.yaml): Helm's form for the render, and the text
/// as given for messages that quote the user. Two are equal when Helm reads them as one version
/// (`v1.33.0` and `1.33`).
#[derive(Debug, Clone)]
pub struct KubeVersion {
    given: String,
    helm: String,
}

impl PartialEq for KubeVersion {
    fn eq(&self, other: &KubeVersion) -> bool {
        self.helm == other.helm
    }
}

impl Eq for KubeVersion {}

impl KubeVersion {
    /// The version in Helm's form (`1.35.0`, `1.29.4+k3s1`), as the chart sees it.
    pub fn helm_form(&self) -> &str {
        &self.helm
    }

    /// The text it was read from, for messages that quote the user's input.
    pub fn as_given(&self) -> &str {
        &self.given
    }
}

impl Default for KubeVersion {
    /// `render::DEFAULT_KUBE_VERSION`, Helm's own default cluster for `helm template`.
    fn default() -> KubeVersion {
        crate::render::DEFAULT_KUBE_VERSION
            .parse()
            .expect("the default Kubernetes version is one")
    }
}

impl std::str::FromStr for KubeVersion {
    type Err = RenderError;

    fn from_str(text: &str) -> Result<KubeVersion, RenderError> {
        Ok(KubeVersion {
            helm: helm_form(text)?,
            given: text.to_string(),
        })
    }
}

impl std::fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.helm)
    }
}

/// The API versions the cluster serves (Helm's `--api-versions`, Argo CD's
/// `KUBE_API_VERSIONS`): a comma-separated list, each entry trimmed, empty entries dropped, as
/// `chartutil.VersionSet` is filled from them. Helm does not check their form, and neither does
/// this: the chart only asks whether one is present.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiVersions(Vec<String>);

impl ApiVersions {
    /// The list read from one or more comma-separated texts (repeated flags add up).
    pub fn from_lists<'a>(lists: impl IntoIterator<Item = &'a str>) -> ApiVersions {
        ApiVersions(
            lists
                .into_iter()
                .flat_map(|l| l.split(','))
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect(),
        )
    }

    /// The entries, in the order given.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// Whether no API version beyond the built-in ones is given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// This list with `other`'s entries after it (a repeated flag).
    pub fn extended(mut self, other: &ApiVersions) -> ApiVersions {
        self.0.extend(other.0.iter().cloned());
        self
    }
}

impl std::str::FromStr for ApiVersions {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<ApiVersions, Self::Err> {
        Ok(ApiVersions::from_lists([text]))
    }
}

impl std::fmt::Display for ApiVersions {
    /// Comma-separated, as the flag and the variable take it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join(","))
    }
}

/// `text` in Helm's form, without the leading `v`; refused when it is no Kubernetes version.
pub fn helm_form(text: &str) -> Result<String, RenderError> {
    let bad = || RenderError::KubeVersion(text.to_string());
    let t = text.trim();
    let t = t.strip_prefix('v').unwrap_or(t);
    let split = t.find(['-', '+']).unwrap_or(t.len());
    let (core, suffix) = t.split_at(split);
    let nums: Vec<&str> = core.split('.').collect();
    let number = |s: &&str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !(2..=3).contains(&nums.len()) || !nums.iter().all(number) {
        return Err(bad());
    }
    let suffix_ok = suffix
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-+.".contains(&b));
    if !suffix_ok || suffix.len() == 1 {
        return Err(bad());
    }
    let patch = if nums.len() == 3 { "" } else { ".0" };
    Ok(format!("{core}{patch}{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kube_version_keeps_the_text_given_beside_helms_form() {
        let v: KubeVersion = "v1.33".parse().unwrap();
        assert_eq!((v.helm_form(), v.as_given()), ("1.33.0", "v1.33"));
        assert!(matches!(
            "1.x".parse::<KubeVersion>(),
            Err(RenderError::KubeVersion(t)) if t == "1.x"
        ));
        assert_eq!(KubeVersion::default().helm_form(), "1.35.0");
        // One version for Helm, however it was written.
        assert_eq!(v, "1.33.0".parse::<KubeVersion>().unwrap());
        assert_ne!(v, "1.33.1".parse::<KubeVersion>().unwrap());
    }

    #[test]
    fn api_versions_split_as_helm_fills_its_version_set() {
        let a = ApiVersions::from_lists([" a/v1, ,b/v1", "", "c/v2"]);
        assert_eq!(a.as_slice(), ["a/v1", "b/v1", "c/v2"]);
        assert_eq!(a.to_string(), "a/v1,b/v1,c/v2");
        assert!("".parse::<ApiVersions>().unwrap().is_empty());
    }

    #[test]
    fn kube_versions_in_argo_cd_forms() {
        assert_eq!(helm_form("1.35").unwrap(), "1.35.0");
        assert_eq!(helm_form("v1.29.4+k3s1").unwrap(), "1.29.4+k3s1");
        assert_eq!(helm_form("1.35-gke.1").unwrap(), "1.35.0-gke.1");
        for bad in ["latest", "1", "1.2.3.4", "1.x", "1.35-", "1.35+a b"] {
            assert!(helm_form(bad).is_err(), "{bad}");
        }
    }
}
