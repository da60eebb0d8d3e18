//! The target cluster's Kubernetes version as `--kube-version` (or Argo CD's `KUBE_VERSION`)
//! gives it, in the form Helm 4 holds it for `.Capabilities.KubeVersion` and the chart's
//! `kubeVersion` check: `chartutil.ParseKubeVersion` reads it with Masterminds semver
//! (`NewVersion`, a leading `v` and a missing patch allowed) and keeps semver's `String()`, so
//! `1.35` is `1.35.0` and a suffix (`1.29.4+k3s1`, `1.35.0-gke.1`) stays.

use crate::error::RenderError;

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
    fn kube_versions_in_argo_cd_forms() {
        assert_eq!(helm_form("1.35").unwrap(), "1.35.0");
        assert_eq!(helm_form("v1.29.4+k3s1").unwrap(), "1.29.4+k3s1");
        assert_eq!(helm_form("1.35-gke.1").unwrap(), "1.35.0-gke.1");
        for bad in ["latest", "1", "1.2.3.4", "1.x", "1.35-", "1.35+a b"] {
            assert!(helm_form(bad).is_err(), "{bad}");
        }
    }
}
