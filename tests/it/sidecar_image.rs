//! The sidecar image as `sidecar/build-image` writes it (an OCI image layout, no Docker daemon):
//! built twice from one static binary it has one digest; unpacked as a runtime unpacks it
//! (index.json → manifest → layers) and run as the repo-server's sidecar runs (uid 999,
//! read-only root, only /tmp writable, the image's Env, the plugin contract through
//! `../shared/tools/cmp_emulator.py`) it generates what the host binary generates; the static
//! binary needs no C library, allocates with mimalloc and fetches over the network; the release
//! workflow builds, pushes and attests the image with the script.
//!
//! The static binary is one release build (about 3 minutes on 2 cores), made once per run by
//! the first test that needs it, with the script's own recipe (`--build-binary`), into
//! `target/tmp/sidecar-image` (its RUSTFLAGS differ from the test build's, so it has its own
//! target folder and never makes the test build rebuild).

use crate::support::harness;
use crate::support::refusal;
use crate::support::scratch;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use refusal::stderr;
use scratch::Scratch;
use serde_json::Value;
use sha2::{Digest, Sha256};

const EMULATOR: &str = "tools/cmp_emulator.py";
const APP: &str = "examples/argocd/cilium";

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "two_builds_from_the_same_inputs_have_one_digest",
                two_builds_from_the_same_inputs_have_one_digest,
            )
            .shared("charts")
            .python(),
            harness::test(
                "the_dockerfile_builds_the_same_tree_and_settings",
                the_dockerfile_builds_the_same_tree_and_settings,
            )
            .shared("charts")
            .python(),
            harness::test(
                "the_image_generates_as_the_repo_server_runs_it",
                the_image_generates_as_the_repo_server_runs_it,
            )
            .shared("charts")
            .shared(EMULATOR)
            .python()
            .needs(namespaces),
            harness::test(
                "the_static_binary_needs_no_c_library_in_the_image",
                the_static_binary_needs_no_c_library_in_the_image,
            )
            .shared("charts")
            .python()
            .needs(namespaces),
            harness::test(
                "a_dynamic_binary_or_a_wrong_archive_is_refused",
                a_dynamic_binary_or_a_wrong_archive_is_refused,
            )
            .shared("charts")
            .python(),
            harness::test(
                "the_release_workflow_builds_pushes_and_attests_with_the_script",
                the_release_workflow_builds_pushes_and_attests_with_the_script,
            )
            .python(),
        ],
    )
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn charts() -> PathBuf {
    harness::shared("charts")
}

/// The pinned archives (sidecar/charts.sha256): (file name, sha256).
fn pins() -> Vec<(String, String)> {
    std::fs::read_to_string(root().join("sidecar/charts.sha256"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (sum, name) = l.split_once("  ").expect("SHA256  NAME");
            (name.to_string(), sum.to_string())
        })
        .collect()
}

/// The static binary, built once per run with the script's recipe.
fn static_binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sidecar-image");
        let o = Command::new(harness::python())
            .arg(root().join("sidecar/build-image"))
            .arg("--build-binary")
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("python runs");
        assert!(
            o.status.success(),
            "sidecar/build-image --build-binary failed: {}",
            stderr(&o)
        );
        PathBuf::from(String::from_utf8(o.stdout).unwrap().trim())
    })
}

fn build_image(binary: &Path, charts: &Path, out: &Path) -> Output {
    Command::new(harness::python())
        .arg(root().join("sidecar/build-image"))
        .arg("--binary")
        .arg(binary)
        .arg("--charts")
        .arg(charts)
        .arg(out)
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("CILIUM_CMP_CHART_DIR")
        .output()
        .expect("python runs")
}

/// An image built into a new scratch folder; panics unless the build succeeded.
fn built_image(tag: &str) -> (Scratch, String) {
    let s = Scratch::new(tag);
    let dir = s.0.join("layout");
    let o = build_image(static_binary(), &charts(), &dir);
    assert!(o.status.success(), "sidecar/build-image: {}", stderr(&o));
    let digest = String::from_utf8(o.stdout).unwrap().trim().to_string();
    (s, digest)
}

fn sha256(data: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(data))
}

/// A blob of the layout, checked against its descriptor as a runtime checks it.
fn blob(layout: &Path, descriptor: &Value) -> Vec<u8> {
    let digest = descriptor["digest"].as_str().expect("digest");
    let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
    let data = std::fs::read(layout.join("blobs/sha256").join(hex)).expect("blob present");
    assert_eq!(sha256(&data), digest, "blob content is its digest");
    assert_eq!(data.len() as u64, descriptor["size"].as_u64().unwrap());
    data
}

/// index.json → the one manifest → its config and layers.
struct Image {
    manifest_digest: String,
    config: Value,
    layers: Vec<Vec<u8>>,
}

fn read_layout(layout: &Path) -> Image {
    let oci: Value =
        serde_json::from_slice(&std::fs::read(layout.join("oci-layout")).unwrap()).unwrap();
    assert_eq!(oci["imageLayoutVersion"], "1.0.0");
    let index: Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    let manifests = index["manifests"].as_array().expect("index.json manifests");
    assert_eq!(manifests.len(), 1, "{index}");
    let described = &manifests[0];
    assert_eq!(
        described["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        described["annotations"]["org.opencontainers.image.ref.name"],
        version
    );
    let manifest: Value = serde_json::from_slice(&blob(layout, described)).unwrap();
    assert_eq!(manifest["schemaVersion"], 2);
    let config: Value = serde_json::from_slice(&blob(layout, &manifest["config"])).unwrap();
    let diff_ids = config["rootfs"]["diff_ids"].as_array().expect("diff_ids");
    let mut layers = Vec::new();
    for (i, d) in manifest["layers"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            d["mediaType"],
            "application/vnd.oci.image.layer.v1.tar+gzip"
        );
        let gz = blob(layout, d);
        // gzip header (RFC 1952): MTIME 0, and no FNAME flag (no file name in the header).
        assert_eq!(&gz[4..8], &[0, 0, 0, 0], "gzip MTIME");
        assert_eq!(gz[3] & 0x08, 0, "gzip FNAME flag");
        let mut tar = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut tar)
            .unwrap();
        assert_eq!(
            diff_ids[i],
            sha256(&tar),
            "diff_id is the uncompressed layer's digest"
        );
        layers.push(tar);
    }
    Image {
        manifest_digest: described["digest"].as_str().unwrap().to_string(),
        config,
        layers,
    }
}

/// Every entry of the layers: path → (type, mode, uid, gid, mtime).
fn entries(image: &Image) -> BTreeMap<String, (char, u32, u64, u64, u64)> {
    let mut all = BTreeMap::new();
    for layer in &image.layers {
        let mut ar = tar::Archive::new(&layer[..]);
        for e in ar.entries().unwrap() {
            let e = e.unwrap();
            let h = e.header();
            let path = e
                .path()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches('/')
                .to_string();
            let kind = if h.entry_type().is_dir() { 'd' } else { 'f' };
            all.insert(
                path,
                (
                    kind,
                    h.mode().unwrap(),
                    h.uid().unwrap(),
                    h.gid().unwrap(),
                    h.mtime().unwrap(),
                ),
            );
        }
    }
    all
}

/// The file tree sidecar/Dockerfile's image has too (see its last stage).
fn expected_tree() -> BTreeMap<String, (char, u32, u64, u64, u64)> {
    let mut t = BTreeMap::new();
    let dir = |t: &mut BTreeMap<_, _>, p: &str, mode, uid| {
        t.insert(p.to_string(), ('d', mode, uid, uid, 0));
    };
    for p in [
        "home",
        "home/argocd",
        "home/argocd/cmp-server",
        "home/argocd/cmp-server/config",
        "opt",
        "opt/cilium-cmp",
        "opt/cilium-cmp/charts",
        "usr",
        "usr/local",
        "usr/local/bin",
    ] {
        dir(&mut t, p, 0o755, 0);
    }
    dir(&mut t, "tmp", 0o1777, 0);
    dir(&mut t, "home/argocd/cmp-server/plugins", 0o755, 999);
    t.insert("usr/local/bin/cilium-cmp".into(), ('f', 0o755, 0, 0, 0));
    t.insert(
        "home/argocd/cmp-server/config/plugin.yaml".into(),
        ('f', 0o644, 0, 0, 0),
    );
    for (name, _) in pins() {
        t.insert(
            format!("opt/cilium-cmp/charts/{name}"),
            ('f', 0o644, 0, 0, 0),
        );
    }
    t
}

/// Two builds from the same binary and archives: one manifest digest, the same bytes in every
/// blob; the file tree, owners, modes and the config's process settings are the sidecar's.
fn two_builds_from_the_same_inputs_have_one_digest() {
    let (a, digest_a) = built_image("image-a");
    let (b, digest_b) = built_image("image-b");
    assert_eq!(digest_a, digest_b, "two builds of the same inputs");
    let (la, lb) = (a.0.join("layout"), b.0.join("layout"));
    assert_eq!(
        std::fs::read(la.join("index.json")).unwrap(),
        std::fs::read(lb.join("index.json")).unwrap()
    );
    let image = read_layout(&la);
    assert_eq!(
        image.manifest_digest, digest_a,
        "the digest printed is the manifest's"
    );
    assert_eq!(entries(&image), expected_tree());
    let config = &image.config["config"];
    assert_eq!(config["User"], "999:999");
    assert_eq!(
        config["Env"],
        serde_json::json!([
            "PATH=/usr/local/bin",
            "CILIUM_CMP_CHART_DIR=/opt/cilium-cmp/charts",
            "HOME=/tmp"
        ])
    );
    assert_eq!(image.config["created"], "1970-01-01T00:00:00Z");
    assert_eq!(
        (
            image.config["os"].as_str(),
            image.config["architecture"].as_str()
        ),
        (Some("linux"), Some("amd64"))
    );
    // The layer's files are the inputs' bytes.
    let mut ar = tar::Archive::new(&image.layers[0][..]);
    let pinned: BTreeMap<String, String> = pins().into_iter().collect();
    let mut seen = 0;
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        let path = e.path().unwrap().to_string_lossy().to_string();
        let mut data = Vec::new();
        e.read_to_end(&mut data).unwrap();
        if let Some(name) = path
            .strip_prefix("opt/cilium-cmp/charts/")
            .filter(|n| !n.is_empty())
        {
            assert_eq!(sha256(&data), format!("sha256:{}", pinned[name]), "{path}");
            seen += 1;
        } else if path == "usr/local/bin/cilium-cmp" {
            assert_eq!(data, std::fs::read(static_binary()).unwrap());
        } else if path == "home/argocd/cmp-server/config/plugin.yaml" {
            assert_eq!(data, std::fs::read(root().join("plugin.yaml")).unwrap());
        }
    }
    assert_eq!(seen, pinned.len());
    // A different epoch is a different image: the timestamps really come from SOURCE_DATE_EPOCH.
    let c = Scratch::new("image-c");
    let o = Command::new(harness::python())
        .arg(root().join("sidecar/build-image"))
        .arg("--binary")
        .arg(static_binary())
        .arg("--charts")
        .arg(charts())
        .arg(c.0.join("layout"))
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let other = read_layout(&c.0.join("layout"));
    assert_ne!(other.manifest_digest, digest_a);
    assert_eq!(other.config["created"], "2023-11-14T22:13:20Z");
    assert!(entries(&other).values().all(|e| e.4 == 1_700_000_000));
}

/// sidecar/Dockerfile's last stage against the layout: its ENV and USER are the config's, and
/// its COPY lines place exactly the layout's top-level files and folders, with the same modes
/// and owners where it sets them.
fn the_dockerfile_builds_the_same_tree_and_settings() {
    let text = std::fs::read_to_string(root().join("sidecar/Dockerfile")).unwrap();
    let last = &text[text.rfind("\nFROM scratch").expect("a scratch stage")..];
    // Instructions with their continuation lines joined, comments dropped.
    let mut instructions: Vec<String> = Vec::new();
    let mut open = false;
    for line in last
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (body, more) = match line.strip_suffix('\\') {
            Some(b) => (b.trim(), true),
            None => (line, false),
        };
        if open {
            let l = instructions.last_mut().unwrap();
            l.push(' ');
            l.push_str(body);
        } else {
            instructions.push(body.to_string());
        }
        open = more;
    }
    let (s, _) = built_image("image-dockerfile");
    let image = read_layout(&s.0.join("layout"));
    let config = &image.config["config"];
    let env: Vec<String> = instructions
        .iter()
        .filter_map(|i| i.strip_prefix("ENV "))
        .flat_map(|e| e.split_whitespace().map(str::to_string))
        .collect();
    assert_eq!(serde_json::json!(env), config["Env"], "ENV");
    let user: Vec<&str> = instructions
        .iter()
        .filter_map(|i| i.strip_prefix("USER "))
        .collect();
    assert_eq!(user, [config["User"].as_str().unwrap()], "USER");
    assert!(!instructions
        .iter()
        .any(|i| i.starts_with("ENTRYPOINT") || i.starts_with("CMD")));
    // COPY [--from=..] [--chmod=..] [--chown=..] SRC DEST: DEST → (chmod, chown).
    let mut copied = BTreeMap::new();
    for i in instructions.iter().filter_map(|i| i.strip_prefix("COPY ")) {
        let words: Vec<&str> = i.split_whitespace().collect();
        let flag = |name: &str| {
            words
                .iter()
                .find_map(|w| w.strip_prefix(name))
                .map(str::to_string)
        };
        let dest = words
            .last()
            .unwrap()
            .trim_end_matches('/')
            .trim_start_matches('/');
        if dest.is_empty() {
            // `COPY --from=S /tree/ /`: the folders the stage made below /tree (`mkdir -p`).
            for name in text
                .split_whitespace()
                .filter_map(|w| w.strip_prefix("/tree/"))
                .filter(|n| !n.is_empty())
            {
                copied.insert(name.to_string(), (flag("--chmod="), flag("--chown=")));
            }
        } else {
            copied.insert(dest.to_string(), (flag("--chmod="), flag("--chown=")));
        }
    }
    let tree = entries(&image);
    // What the COPY lines must place: the tree's leaves (files and empty folders), the chart
    // archives as their one folder.
    let placed: std::collections::BTreeSet<String> = tree
        .keys()
        .filter(|p| !tree.keys().any(|q| q.starts_with(&format!("{p}/"))))
        .map(|p| match p.strip_prefix("opt/cilium-cmp/charts/") {
            Some(_) => "opt/cilium-cmp/charts".to_string(),
            None => p.clone(),
        })
        .collect();
    assert_eq!(
        placed.iter().collect::<Vec<_>>(),
        copied.keys().collect::<Vec<_>>(),
        "the Dockerfile's COPY destinations"
    );
    for (dest, (chmod, chown)) in &copied {
        let (_, mode, uid, gid, _) = tree[dest];
        if let Some(chmod) = chmod {
            assert_eq!(u32::from_str_radix(chmod, 8).unwrap(), mode, "{dest}");
        }
        let owner = chown.clone().unwrap_or("0:0".into());
        assert_eq!(owner, format!("{uid}:{gid}"), "{dest}: --chown");
    }
}

/// Unpacks the image's root filesystem as a runtime does: each layer in order, owners and modes
/// as the tar says (this process is root when it runs the image, see `sandbox`).
fn unpack(image: &Image, into: &Path) {
    for layer in &image.layers {
        let mut ar = tar::Archive::new(&layer[..]);
        ar.set_preserve_permissions(true);
        ar.set_preserve_ownerships(unsafe { libc::geteuid() } == 0);
        ar.set_unpack_xattrs(false);
        for e in ar.entries().unwrap() {
            let mut e = e.unwrap();
            let path = e.path().unwrap().to_path_buf();
            // A runtime applies whiteouts of lower layers; this image has one layer and none.
            assert!(
                !path.to_string_lossy().contains(".wh."),
                "{}",
                path.display()
            );
            assert!(
                e.unpack_in(into).unwrap(),
                "{} stays inside the root",
                path.display()
            );
        }
    }
    // The mount points a runtime creates before it makes the root read-only (runc does): /proc,
    // and the kubelet's /etc/hosts and /etc/resolv.conf.
    std::fs::create_dir(into.join("proc")).unwrap();
    std::fs::create_dir(into.join("etc")).unwrap();
    std::fs::write(into.join("etc/hosts"), "").unwrap();
    std::fs::write(into.join("etc/resolv.conf"), "").unwrap();
}

/// Why the image cannot be run here, if it cannot: it needs new mount, pid and network
/// namespaces and chroot, as root (or through `sudo -n`, as on CI's runners).
fn namespaces() -> Option<String> {
    let o = sandbox_prefix().arg("true").output();
    match o {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "running the image needs mount and pid namespaces as root (unshare --mount --pid as root or through sudo -n): {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(format!("running the image needs unshare(1): {e}")),
    }
}

fn sandbox_prefix() -> Command {
    let unshare = [
        "unshare",
        "--mount",
        "--pid",
        "--net",
        "--fork",
        "--kill-child",
    ];
    if unsafe { libc::geteuid() } == 0 {
        let mut c = Command::new(unshare[0]);
        c.args(&unshare[1..]);
        c
    } else {
        let mut c = Command::new("sudo");
        c.arg("-n").args(unshare);
        c
    }
}

/// The unpacked image, and a command line that runs tests/it/support/sidecar_sandbox.py in it.
struct Unpacked {
    _scratch: Scratch,
    rootfs: PathBuf,
    config: PathBuf,
    shims: PathBuf,
}

fn unpacked_image() -> Unpacked {
    let (s, _) = built_image("image-run");
    let image = read_layout(&s.0.join("layout"));
    let rootfs = s.0.join("rootfs");
    std::fs::create_dir(&rootfs).unwrap();
    unpack(&image, &rootfs);
    let config = s.0.join("config.json");
    std::fs::write(&config, serde_json::to_vec(&image.config).unwrap()).unwrap();
    let shims = s.0.join("shims");
    std::fs::create_dir(&shims).unwrap();
    Unpacked {
        _scratch: s,
        rootfs,
        config,
        shims,
    }
}

impl Unpacked {
    fn sandbox(&self, mode: &str) -> Command {
        let mut c = sandbox_prefix();
        c.arg(harness::python())
            .arg(root().join("tests/it/support/sidecar_sandbox.py"))
            .arg(&self.rootfs)
            .arg(&self.config)
            .arg(&self.shims)
            .arg(mode);
        c
    }

    /// One command of the image, as its container's process: `env` on top of the image's Env.
    fn run(&self, env: &[&str], argv: &[&str]) -> Output {
        self.sandbox("run")
            .args(env)
            .arg("/")
            .args(argv)
            .output()
            .expect("sandbox runs")
    }
}

/// What the plugin contract gives for the example folder, with parameters and plugin env set,
/// as in tests/it/plugin.rs: `emulator` runs ../shared/tools/cmp_emulator.py with `sidecar` first.
fn contract_args() -> Vec<String> {
    [
        "--plugin-yaml",
        &root().join("plugin.yaml").to_string_lossy(),
        "--repo",
        &root().to_string_lossy(),
        "--app-path",
        APP,
        "--tar-exclude",
        ".git",
        "--tar-exclude",
        "target",
        "--revision",
        "0123456789abcdef0123456789abcdef01234567",
        "--show-manifests",
        "--plugin-name",
        "cilium-cmp-v1",
        "--app-namespace",
        "kube-system",
        "--kube-version",
        "v1.35.0+talos",
        "--api-versions",
        "apps/v1,policy/v1,v1",
        "--env",
        "SET=operator.replicas=2",
        "--params-json",
        r#"[{"name":"cilium-version","string":"1.18.11"},{"name":"set","array":["cluster.id=3"]}]"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn report(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        panic!(
            "emulator output is not JSON (exit {:?}): {}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

/// The image, run as the repo-server runs its sidecar, generates the objects the host binary
/// generates for the same Application.
fn the_image_generates_as_the_repo_server_runs_it() {
    let image = unpacked_image();
    let emulator = harness::shared(EMULATOR);
    let in_image = image
        .sandbox("emulate")
        .arg(harness::python())
        .arg(&emulator)
        .args(contract_args())
        .output()
        .expect("sandbox runs");
    let in_image = report(&in_image);
    let home = Scratch::new("host-home");
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp"))
        .parent()
        .unwrap()
        .to_path_buf();
    let on_host = Command::new(harness::python())
        .arg(&emulator)
        .args(["--isolate-env", "--sidecar-env"])
        .arg(format!("CILIUM_CMP_CHART_DIR={}", charts().display()))
        .args(contract_args())
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("HOME", &home.0)
        .output()
        .unwrap();
    let on_host = report(&on_host);
    for key in [
        "discovered",
        "plugin_name",
        "exit_code",
        "error",
        "warnings",
        "stage",
    ] {
        assert_eq!(
            in_image[key], on_host[key],
            "{key}: image {in_image} host {on_host}"
        );
    }
    assert_eq!(in_image["exit_code"], 0, "{in_image}");
    let objects = in_image["manifests"].as_array().expect("manifests");
    assert!(objects.len() > 10, "{in_image}");
    assert!(
        in_image["manifests"] == on_host["manifests"],
        "the image's objects differ from the host binary's"
    );
    // Rendered as 1.18.11 from the image's own archive, with the parameter's --set.
    let agent = objects
        .iter()
        .find(|o| o["kind"] == "DaemonSet" && o["metadata"]["name"] == "cilium")
        .expect("the cilium DaemonSet");
    assert!(
        agent.to_string().contains("v1.18.11"),
        "image tag of 1.18.11"
    );
}

/// The binary in the image has nothing beside it (no loader, no libc, no NSS modules): `file` and
/// `ldd` call it static; run in the image as uid 999 it lists its releases, allocates through
/// mimalloc (built with the fixed date), and the chart fetch's HTTP client resolves names and
/// connects: to an address, to `localhost` through the pod's /etc/hosts, and to a DNS name
/// through the pod's /etc/resolv.conf (a stand-in DNS server in the sandbox's own network).
fn the_static_binary_needs_no_c_library_in_the_image() {
    let binary = static_binary();
    let file = Command::new("file").arg(binary).output().expect("file(1)");
    let file = String::from_utf8_lossy(&file.stdout);
    assert!(
        file.contains("static-pie linked") || file.contains("statically linked"),
        "{file}"
    );
    let ldd = Command::new("ldd").arg(binary).output().expect("ldd(1)");
    let ldd = format!(
        "{}{}",
        String::from_utf8_lossy(&ldd.stdout),
        String::from_utf8_lossy(&ldd.stderr)
    );
    assert!(
        ldd.contains("not a dynamic executable") || ldd.contains("statically linked"),
        "{ldd}"
    );

    let image = unpacked_image();
    let versions = image.run(&[], &["cilium-cmp", "versions"]);
    assert!(versions.status.success(), "{}", stderr(&versions));
    let listed = String::from_utf8_lossy(&versions.stdout);
    for (name, _) in pins() {
        let v = name.trim_start_matches("cilium-").trim_end_matches(".tgz");
        assert!(listed.lines().any(|l| l == v), "{v} in {listed}");
    }
    // mimalloc reads MIMALLOC_VERBOSE at start-up and reports its version and build date: it
    // is the allocator, and its C build took the date from SOURCE_DATE_EPOCH (0), not the clock.
    let verbose = image.run(&["MIMALLOC_VERBOSE=1"], &["cilium-cmp", "versions"]);
    assert!(verbose.status.success(), "{}", stderr(&verbose));
    assert!(
        stderr(&verbose).contains("(built on Jan  1 1970, 00:00:00)"),
        "{}",
        stderr(&verbose)
    );

    let archive = charts().join("cilium-1.20.0.tgz");
    let serve = format!("--serve=8080:{}", archive.display());
    for repo in ["http://127.0.0.1:8080/", "http://localhost:8080/"] {
        let o = image.run(&["--kubelet-etc", &serve], &fetch(repo, "/tmp/fetched"));
        assert!(o.status.success(), "{repo}: {}", stderr(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            "/tmp/fetched/cilium-1.20.0.tgz"
        );
    }
    // helm.cilium.io resolved by the pod's DNS server to a listener that takes the connection and
    // closes it: the name was looked up and connected to (TLS then fails, as it must).
    let o = image.run(
        &["--kubelet-etc", "--dns=helm.cilium.io", "--listen=443"],
        &fetch("", "/tmp/fetched"),
    );
    assert!(!o.status.success() && o.stdout.is_empty(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("sidecar_sandbox: a connection to 127.0.0.1:443"),
        "{err}"
    );
    assert!(!err.contains("lookup"), "{err}");
    // With no DNS server answering, the lookup's failure is an error naming the address.
    let o = image.run(&["--kubelet-etc"], &fetch("", "/tmp/fetched"));
    assert!(!o.status.success() && o.stdout.is_empty(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("https://helm.cilium.io/"),
        "{}",
        stderr(&o)
    );
    // Outside /tmp the root filesystem is read-only.
    let o = image.run(&[&serve], &fetch("http://127.0.0.1:8080/", "/opt/x"));
    assert!(!o.status.success() && o.stdout.is_empty(), "{}", stderr(&o));
    assert!(stderr(&o).contains("/opt/x"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("Read-only file system"),
        "{}",
        stderr(&o)
    );
}

/// `chart fetch` of 1.20.0 into `dir`, from `repo` (empty: the default, helm.cilium.io).
fn fetch<'a>(repo: &'a str, dir: &'a str) -> Vec<&'a str> {
    let mut argv = vec!["cilium-cmp", "chart", "fetch", "1.20.0", "--dir", dir];
    if !repo.is_empty() {
        argv.extend(["--repo", repo]);
    }
    argv
}

/// The script refuses what would make a broken image, naming the file and what is valid, with
/// nothing on stdout and no layout written.
fn a_dynamic_binary_or_a_wrong_archive_is_refused() {
    let s = Scratch::new("refusals");
    let out = s.0.join("layout");
    let dynamic = build_image(Path::new(env!("CARGO_BIN_EXE_cilium-cmp")), &charts(), &out);
    assert_eq!(dynamic.status.code(), Some(1), "{}", stderr(&dynamic));
    assert!(dynamic.stdout.is_empty());
    assert!(
        stderr(&dynamic).contains("dynamically linked"),
        "{}",
        stderr(&dynamic)
    );
    assert!(
        stderr(&dynamic).contains("--build-binary"),
        "{}",
        stderr(&dynamic)
    );
    assert!(!out.exists());

    // A chart folder with one archive changed by a byte, and one with it missing.
    let wrong = s.0.join("wrong");
    let missing = s.0.join("missing");
    for d in [&wrong, &missing] {
        std::fs::create_dir(d).unwrap();
        for (name, _) in pins() {
            if name != "cilium-1.19.3.tgz" {
                std::os::unix::fs::symlink(charts().join(&name), d.join(&name)).unwrap();
            }
        }
    }
    let mut bytes = std::fs::read(charts().join("cilium-1.19.3.tgz")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(wrong.join("cilium-1.19.3.tgz"), &bytes).unwrap();
    let o = build_image(static_binary(), &wrong, &out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    let pin = pins()
        .into_iter()
        .find(|p| p.0 == "cilium-1.19.3.tgz")
        .unwrap()
        .1;
    assert!(
        err.contains("cilium-1.19.3.tgz") && err.contains(&pin),
        "{err}"
    );
    assert!(
        err.contains(&format!("{:x}", Sha256::digest(&bytes))),
        "{err}"
    );
    assert!(!out.exists());
    let o = build_image(static_binary(), &missing, &out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cilium-cmp chart fetch 1.19.3 --dir"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());

    // A folder that is not empty is never written into.
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep"), "x").unwrap();
    let o = build_image(static_binary(), &charts(), &out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("not empty"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
}

/// .github/workflows/image.yml, read as GitHub reads it (YAML): on a tag it builds the image with
/// sidecar/build-image, pushes the layout with its digest, and attests an SBOM and provenance
/// for that digest; every action is pinned to a release.
fn the_release_workflow_builds_pushes_and_attests_with_the_script() {
    let path = root().join(".github/workflows/image.yml");
    let o = Command::new(harness::python())
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1])), default=str))",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}: {}", path.display(), stderr(&o));
    let wf: Value = serde_json::from_slice(&o.stdout).unwrap();
    // PyYAML (YAML 1.1) reads the key `on` as true, as GitHub's docs warn for other parsers.
    let on = if wf["on"].is_null() {
        &wf["true"]
    } else {
        &wf["on"]
    };
    assert!(
        on["push"]["tags"].as_array().is_some_and(|t| !t.is_empty()),
        "{on}"
    );
    let jobs = wf["jobs"].as_object().expect("jobs");
    let steps: Vec<&Value> = jobs
        .values()
        .flat_map(|j| j["steps"].as_array().unwrap().iter())
        .collect();
    let runs = |needle: &str| {
        steps
            .iter()
            .any(|s| s["run"].as_str().is_some_and(|r| r.contains(needle)))
    };
    assert!(
        runs("sidecar/build-image"),
        "a step runs sidecar/build-image"
    );
    assert!(
        runs("crane push") || runs("skopeo copy") || runs("oras cp"),
        "a step pushes the layout"
    );
    let uses: Vec<&str> = steps.iter().filter_map(|s| s["uses"].as_str()).collect();
    for u in &uses {
        let (_, version) = u
            .split_once('@')
            .unwrap_or_else(|| panic!("{u}: not pinned"));
        let release = version
            .strip_prefix('v')
            .is_some_and(|v| v.split('.').all(|n| n.parse::<u32>().is_ok()));
        let commit = version.len() == 40 && version.chars().all(|c| c.is_ascii_hexdigit());
        assert!(
            release || commit,
            "{u}: pin a release tag or a commit, not a branch"
        );
    }
    let step = |prefix: &str| {
        *steps
            .iter()
            .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(prefix)))
            .unwrap_or_else(|| panic!("a step uses {prefix}"))
    };
    // The attested digest is the one the build step printed (and the push step checked).
    let build = steps
        .iter()
        .find(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("sidecar/build-image"))
        })
        .unwrap();
    let id = build["id"].as_str().expect("the build step has an id");
    let digest = format!("${{{{ steps.{id}.outputs.digest }}}}");
    let provenance = step("actions/attest-build-provenance@");
    assert_eq!(
        provenance["with"]["subject-digest"],
        digest.as_str(),
        "{provenance}"
    );
    assert_eq!(provenance["with"]["push-to-registry"], true, "{provenance}");
    // The subject is the image in this repository's registry, as the build step names it
    // (lower-cased: an image reference is lower case, a GitHub owner may not be).
    assert!(
        build["run"].as_str().unwrap().contains(
            r#"image="ghcr.io/$(echo "$GITHUB_REPOSITORY" | tr '[:upper:]' '[:lower:]')""#
        ),
        "{build}"
    );
    let image = format!("${{{{ steps.{id}.outputs.image }}}}");
    assert_eq!(
        provenance["with"]["subject-name"],
        image.as_str(),
        "{provenance}"
    );
    assert!(
        runs(r#"test "$(cat pushed.digest)" = "$DIGEST""#),
        "the push checks the digest"
    );
    let push = steps
        .iter()
        .find(|s| s["run"].as_str().is_some_and(|r| r.contains("skopeo copy")))
        .unwrap();
    assert_eq!(push["env"]["IMAGE"], image.as_str(), "{push}");
    assert_eq!(push["env"]["DIGEST"], digest.as_str(), "{push}");
    // The SBOM is of the pushed digest, and attested for it.
    let sbom = step("anchore/sbom-action@");
    assert_eq!(
        sbom["with"]["image"],
        format!("{image}@{digest}").as_str(),
        "{sbom}"
    );
    let sbom_attest = step("actions/attest-sbom@");
    assert_eq!(
        sbom_attest["with"]["sbom-path"], sbom["with"]["output-file"],
        "{sbom_attest}"
    );
    assert_eq!(sbom_attest["with"]["subject-name"], image.as_str());
    assert_eq!(sbom_attest["with"]["subject-digest"], digest.as_str());
    assert_eq!(
        sbom_attest["with"]["push-to-registry"], true,
        "{sbom_attest}"
    );
    let perms: Vec<&Value> = jobs.values().map(|j| &j["permissions"]).collect();
    for (k, v) in [
        ("packages", "write"),
        ("id-token", "write"),
        ("attestations", "write"),
    ] {
        assert!(perms.iter().any(|p| p[k] == v), "permissions {k}: {v}");
    }
}
