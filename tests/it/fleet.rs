//! `cilium-cmp fleet-check`: the example fleet passes and renders; each way a mesh breaks is
//! found and named with its folder, file and line; bad input is refused with nothing on stdout;
//! the example ApplicationSet makes one plugin Application per folder that Argo CD's schema
//! accepts; the commands of docs/fleet.md exist.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::harness;
use crate::support::scratch;
use scratch::Scratch;

pub fn tests() -> Vec<harness::Trial> {
    harness::group(
        file!(),
        vec![
            harness::test(
                "the_example_fleet_is_one_mesh_without_findings",
                the_example_fleet_is_one_mesh_without_findings,
            ),
            harness::test(
                "the_example_fleet_renders_as_helm_does",
                the_example_fleet_renders_as_helm_does,
            )
            .shared("charts/cilium-1.20.0.tgz")
            .shared("tools/parity.py")
            .python(),
            harness::test(
                "duplicate_ids_and_names_are_found_with_their_lines",
                duplicate_ids_and_names_are_found_with_their_lines,
            ),
            harness::test(
                "ids_must_lie_within_max_connected_clusters",
                ids_must_lie_within_max_connected_clusters,
            ),
            harness::test(
                "max_connected_clusters_must_agree",
                max_connected_clusters_must_agree,
            ),
            harness::test(
                "peers_must_exist_or_be_marked_outside_the_repository",
                peers_must_exist_or_be_marked_outside_the_repository,
            ),
            harness::test(
                "a_peer_switched_off_counts_only_from_1_19",
                a_peer_switched_off_counts_only_from_1_19,
            ),
            harness::test(
                "overlapping_pod_cidrs_are_found",
                overlapping_pod_cidrs_are_found,
            ),
            harness::test(
                "a_mesh_without_a_shared_ca_is_refused",
                a_mesh_without_a_shared_ca_is_refused,
            ),
            harness::test(
                "a_values_ca_is_shared_only_when_every_member_has_the_same",
                a_values_ca_is_shared_only_when_every_member_has_the_same,
            ),
            harness::test(
                "folders_that_run_an_apiserver_without_peers_mesh_with_each_other",
                folders_that_run_an_apiserver_without_peers_mesh_with_each_other,
            ),
            harness::test(
                "clusters_that_name_one_peer_outside_the_repository_share_its_mesh",
                clusters_that_name_one_peer_outside_the_repository_share_its_mesh,
            ),
            harness::test(
                "bad_input_is_refused_with_nothing_on_stdout",
                bad_input_is_refused_with_nothing_on_stdout,
            ),
            harness::test(
                "the_search_stays_inside_the_repository",
                the_search_stays_inside_the_repository,
            ),
            harness::test(
                "the_application_set_makes_one_plugin_application_per_folder",
                the_application_set_makes_one_plugin_application_per_folder,
            )
            .shared("schemas/argoproj.io-application-crd.yaml")
            .python(),
            harness::test(
                "the_commands_of_the_fleet_page_exist",
                the_commands_of_the_fleet_page_exist,
            ),
        ],
    )
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cilium-cmp"))
}

const CLUSTERS: [&str; 3] = ["eu-1", "eu-2", "us-1"];

/// A scratch repository laid out as the example fleet (`common/`, `clusters/NAME/`).
fn fleet() -> Scratch {
    let s = Scratch::new("fleet");
    copy_dir(&root().join("examples/fleet"), &s.0);
    s
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Run {
    let o = Command::new(bin())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    }
}

/// The JSON report of the scratch repository; the exit status must match the findings.
fn report(s: &Scratch) -> Value {
    let r = run(&s.0, &["fleet-check", "--output", "json"]);
    let doc: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr));
    let findings = doc["findings"].as_array().unwrap().len();
    assert_eq!(r.code, if findings == 0 { 0 } else { 3 }, "{}", r.stdout);
    assert_eq!(doc["version"], 1);
    doc
}

/// Where a finding points: (folder, file, line, value path).
type At = (String, String, Value, String);

/// The findings of one check, as (message, places).
fn findings(doc: &Value, check: &str) -> Vec<(String, Vec<At>)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == check)
        .map(|f| {
            let places = f["places"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p["folder"].as_str().unwrap().to_string(),
                        p["file"].as_str().unwrap_or("").to_string(),
                        p["line"].clone(),
                        p["path"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            (f["message"].as_str().unwrap().to_string(), places)
        })
        .collect()
}

fn only_check(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap().to_string())
        .collect()
}

fn place(folder: &str, file: &str, line: u64, path: &str) -> At {
    (
        folder.to_string(),
        file.to_string(),
        Value::from(line),
        path.to_string(),
    )
}

fn cluster_values(name: &str, id: &str, cidr: &str) -> String {
    format!(
        "cluster:\n  name: {name}\n  id: {id}\nipam:\n  mode: cluster-pool\n  operator:\n    clusterPoolIPv4PodCIDRList:\n      - {cidr}\n"
    )
}

fn the_example_fleet_is_one_mesh_without_findings() {
    let r = run(
        root(),
        &[
            "fleet-check",
            "--repo-root",
            "examples/fleet",
            "--output",
            "json",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["folders"], 3);
    assert_eq!(doc["findings"], serde_json::json!([]));
    let meshes = doc["meshes"].as_array().unwrap();
    assert_eq!(meshes.len(), 1, "{}", r.stdout);
    // cluster.id is a number, as the chart reads it.
    let clusters: Vec<(&str, &str, u64)> = meshes[0]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["folder"].as_str().unwrap(),
                c["name"].as_str().unwrap(),
                c["id"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        clusters,
        [
            ("clusters/eu-1", "eu-1", 1),
            ("clusters/eu-2", "eu-2", 2),
            ("clusters/us-1", "us-1", 3)
        ]
    );
    for c in meshes[0]["clusters"].as_array().unwrap() {
        assert_eq!(c["ca"], "cert-manager ClusterIssuer/cilium-mesh-ca");
    }
    // The whole repository holds the example fleet and other folders; they do not mesh.
    let r = run(root(), &["fleet-check"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("1 mesh of 3 clusters"), "{}", r.stdout);
    assert!(r.stdout.ends_with("no findings\n"), "{}", r.stdout);
}

fn the_example_fleet_renders_as_helm_does() {
    let archive = harness::shared("charts/cilium-1.20.0.tgz");
    let s = Scratch::new("fleet-render");
    let mut jobs = Vec::new();
    for c in CLUSTERS {
        let r = run(
            root(),
            &[
                "render-folder",
                &format!("examples/fleet/clusters/{c}"),
                "--namespace",
                "kube-system",
                "--kube-version",
                "1.35.0",
                "--chart-dir",
                archive.parent().unwrap().to_str().unwrap(),
            ],
        );
        assert_eq!(r.code, 0, "{c}: {}", r.stderr);
        let docs = cilium_cmp_yaml::yaml::parse_stream_values(&r.stdout).unwrap();
        // The mesh's CA comes from cert-manager: the apiserver's certificates are Certificates
        // of the shared issuer, and no certgen Job mints a CA of its own.
        let certificates: Vec<&Value> =
            docs.iter().filter(|d| d["kind"] == "Certificate").collect();
        assert!(certificates.len() >= 3, "{c}");
        for cert in certificates {
            assert_eq!(cert["spec"]["issuerRef"]["name"], "cilium-mesh-ca", "{c}");
        }
        assert!(
            !docs.iter().any(|d| d["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("clustermesh-apiserver-generate-certs"))),
            "{c}"
        );
        let config = docs
            .iter()
            .find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == "cilium-config")
            .unwrap();
        assert_eq!(config["data"]["cluster-name"], c);
        let candidate = s.write(&format!("{c}.yaml"), &r.stdout);
        jobs.push(serde_json::json!({
            "name": c,
            "files": [
                root().join("examples/fleet/common/values.yaml"),
                root().join(format!("examples/fleet/clusters/{c}/values.yaml")),
            ],
            "candidate": candidate,
            "out": s.0.join(format!("{c}.helm.yaml")),
        }));
    }
    // Each render is what Helm renders for the folder's values files.
    let parity = harness::shared("tools/parity.py");
    let python = harness::python();
    let jobs_file = s.write("jobs.json", &serde_json::to_string(&jobs).unwrap());
    let o = Command::new(python)
        .args(["-c", HELM_PARITY])
        .env("PYTHONPATH", root().join("tests/it/support"))
        .arg(parity.parent().unwrap())
        .arg(&archive)
        .arg(&jobs_file)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "identical 3");
}

/// Renders each job's values files (merged as Helm merges `-f` files) with real Helm and
/// compares the candidate with parity.py.
const HELM_PARITY: &str = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
from helm_python import _native
from helm_parity import merge, differs

failures = []
jobs = json.load(open(sys.argv[3]))
for job in jobs:
    values = {}
    for f in job["files"]:
        values = merge(values, json.loads(_native.call_string("helm_values_from_yaml", open(f).read())) or {})
    report = differs(sys.argv[1], sys.argv[2], values, job["out"], job["candidate"])
    if report:
        failures.append("%s: render differs from Helm's:\n%s" % (job["name"], report))
if failures:
    sys.exit("\n".join(failures))
print("identical %d" % len(jobs))
"#;

fn duplicate_ids_and_names_are_found_with_their_lines() {
    let s = fleet();
    s.write(
        "clusters/us-1/values.yaml",
        &cluster_values("eu-2", "2", "10.3.0.0/16"),
    );
    let doc = report(&s);
    let ids = findings(&doc, "duplicate-cluster-id");
    assert_eq!(ids.len(), 1, "{doc:#}");
    assert_eq!(
        ids[0].1,
        [
            place(
                "clusters/eu-2",
                "clusters/eu-2/values.yaml",
                4,
                "cluster.id"
            ),
            place(
                "clusters/us-1",
                "clusters/us-1/values.yaml",
                3,
                "cluster.id"
            )
        ]
    );
    let names = findings(&doc, "duplicate-cluster-name");
    assert_eq!(names.len(), 1, "{doc:#}");
    assert_eq!(
        names[0].1,
        [
            place(
                "clusters/eu-2",
                "clusters/eu-2/values.yaml",
                3,
                "cluster.name"
            ),
            place(
                "clusters/us-1",
                "clusters/us-1/values.yaml",
                2,
                "cluster.name"
            )
        ]
    );
    // Text names the same places.
    let r = run(&s.0, &["fleet-check"]);
    assert_eq!(r.code, 3);
    assert!(
        r.stdout
            .contains("clusters/us-1/values.yaml:3: cluster.id = 2 (folder clusters/us-1)"),
        "{}",
        r.stdout
    );
}

fn ids_must_lie_within_max_connected_clusters() {
    let s = fleet();
    s.write(
        "clusters/us-1/values.yaml",
        &cluster_values("us-1", "256", "10.3.0.0/16"),
    );
    let doc = report(&s);
    assert_eq!(only_check(&doc), ["cluster-id-out-of-range"], "{doc:#}");
    let f = &findings(&doc, "cluster-id-out-of-range")[0];
    assert!(f.0.contains("from 1 to 255"), "{}", f.0);
    assert_eq!(
        f.1,
        [
            place(
                "clusters/us-1",
                "clusters/us-1/values.yaml",
                3,
                "cluster.id"
            ),
            place(
                "clusters/us-1",
                "common/values.yaml",
                7,
                "clustermesh.maxConnectedClusters"
            )
        ]
    );
    // 511 allows it, when every member says so.
    let common = std::fs::read_to_string(s.0.join("common/values.yaml")).unwrap();
    s.write(
        "common/values.yaml",
        &common.replace("maxConnectedClusters: 255", "maxConnectedClusters: 511"),
    );
    assert_eq!(only_check(&report(&s)), Vec::<String>::new());
    // 0 is reserved.
    s.write(
        "clusters/us-1/values.yaml",
        &cluster_values("us-1", "0", "10.3.0.0/16"),
    );
    assert_eq!(only_check(&report(&s)), ["cluster-id-out-of-range"]);
}

fn max_connected_clusters_must_agree() {
    let s = fleet();
    let own = cluster_values("eu-1", "1", "10.1.0.0/16");
    s.write(
        "clusters/eu-1/values.yaml",
        &format!("{own}clustermesh:\n  maxConnectedClusters: 511\n"),
    );
    let doc = report(&s);
    assert_eq!(
        only_check(&doc),
        ["max-connected-clusters-differ"],
        "{doc:#}"
    );
    let f = &findings(&doc, "max-connected-clusters-differ")[0];
    assert!(f.0.contains("(255, 511)"), "{}", f.0);
    let path = "clustermesh.maxConnectedClusters";
    assert_eq!(
        f.1,
        [
            place("clusters/eu-1", "clusters/eu-1/values.yaml", 10, path),
            place("clusters/eu-2", "common/values.yaml", 7, path),
            place("clusters/us-1", "common/values.yaml", 7, path)
        ]
    );
}

fn peers_must_exist_or_be_marked_outside_the_repository() {
    let s = fleet();
    let common = std::fs::read_to_string(s.0.join("common/values.yaml")).unwrap();
    s.write(
        "common/values.yaml",
        &common.replace(
            "      us-1:\n",
            "      legacy-dc:\n        address: legacy.mesh.example.com\n        port: 2379\n      us-1:\n",
        ),
    );
    let doc = report(&s);
    let missing = findings(&doc, "missing-peer");
    // Every folder names it (the list is shared): one finding each, at the same line.
    assert_eq!(missing.len(), 3, "{doc:#}");
    for (i, c) in CLUSTERS.iter().enumerate() {
        assert_eq!(
            missing[i].1,
            [place(
                &format!("clusters/{c}"),
                "common/values.yaml",
                18,
                "clustermesh.config.clusters.legacy-dc"
            )]
        );
        assert!(missing[i].0.contains("externalPeers"), "{}", missing[i].0);
    }
    for c in CLUSTERS {
        let settings = format!("clusters/{c}/cilium-cmp.yaml");
        let text = std::fs::read_to_string(s.0.join(&settings)).unwrap();
        s.write(
            &settings,
            &format!("{text}clusterMesh:\n  externalPeers: [legacy-dc]\n"),
        );
    }
    let doc = report(&s);
    assert_eq!(only_check(&doc), Vec::<String>::new(), "{doc:#}");
    assert_eq!(
        doc["meshes"][0]["external"],
        serde_json::json!(["legacy-dc"])
    );
}

fn a_peer_switched_off_counts_only_from_1_19() {
    let s = fleet();
    let common = std::fs::read_to_string(s.0.join("common/values.yaml")).unwrap();
    // The map form and `enabled: false` (both 1.19 on): the entry is left out.
    s.write(
        "common/values.yaml",
        &common.replace(
            "      us-1:\n",
            "      retired:\n        enabled: false\n        address: retired.mesh.example.com\n      us-1:\n",
        ),
    );
    assert_eq!(only_check(&report(&s)), Vec::<String>::new());
    // 1.18 takes a list and writes every entry, switched off or not.
    let list = "    clusters:\n      - name: eu-1\n        address: eu-1.mesh.example.com\n      - name: eu-2\n        address: eu-2.mesh.example.com\n      - name: us-1\n        address: us-1.mesh.example.com\n      - name: retired\n        enabled: false\n        address: retired.mesh.example.com\n";
    let start = common.find("    clusters:\n").unwrap();
    let end = common.find("  apiserver:\n").unwrap();
    let as_list = format!("{}{list}{}", &common[..start], &common[end..]);
    s.write("common/values.yaml", &as_list);
    assert_eq!(only_check(&report(&s)), Vec::<String>::new());
    for c in CLUSTERS {
        let settings = format!("clusters/{c}/cilium-cmp.yaml");
        let text = std::fs::read_to_string(s.0.join(&settings)).unwrap();
        s.write(&settings, &text.replace("\"1.20.0\"", "\"1.18.12\""));
    }
    let doc = report(&s);
    let missing = findings(&doc, "missing-peer");
    assert_eq!(missing.len(), 3, "{doc:#}");
    // The line of the list item itself.
    assert_eq!(
        missing[0].1,
        [place(
            "clusters/eu-1",
            "common/values.yaml",
            18,
            "clustermesh.config.clusters[3]"
        )]
    );
}

fn overlapping_pod_cidrs_are_found() {
    let s = fleet();
    s.write(
        "clusters/us-1/values.yaml",
        &cluster_values("us-1", "3", "10.2.128.0/17"),
    );
    let doc = report(&s);
    assert_eq!(only_check(&doc), ["pod-cidr-overlap"], "{doc:#}");
    let f = &findings(&doc, "pod-cidr-overlap")[0];
    assert!(
        f.0.contains("10.2.0.0/16") && f.0.contains("10.2.128.0/17"),
        "{}",
        f.0
    );
    let path = "ipam.operator.clusterPoolIPv4PodCIDRList[0]";
    assert_eq!(
        f.1,
        [
            place("clusters/eu-2", "clusters/eu-2/values.yaml", 9, path),
            place("clusters/us-1", "clusters/us-1/values.yaml", 8, path)
        ]
    );
    // Left to the chart's default, all clusters take 10.0.0.0/8.
    for (i, c) in CLUSTERS.iter().enumerate() {
        s.write(
            &format!("clusters/{c}/values.yaml"),
            &format!("cluster:\n  name: {c}\n  id: {}\n", i + 1),
        );
    }
    let doc = report(&s);
    let overlaps = findings(&doc, "pod-cidr-overlap");
    // One finding for the three clusters, not one per pair.
    assert_eq!(overlaps.len(), 1, "{doc:#}");
    assert_eq!(overlaps[0].1.len(), 3, "{doc:#}");
    assert!(overlaps[0].0.contains("3 clusters"), "{}", overlaps[0].0);
    assert_eq!(overlaps[0].1[0].1, "", "the chart's default has no file");
    // A mode whose pod CIDRs Kubernetes decides is not checked.
    let common = std::fs::read_to_string(s.0.join("common/values.yaml")).unwrap();
    s.write(
        "common/values.yaml",
        &format!("{common}ipam:\n  mode: kubernetes\n"),
    );
    assert_eq!(only_check(&report(&s)), Vec::<String>::new());
}

fn a_mesh_without_a_shared_ca_is_refused() {
    let s = fleet();
    let common = std::fs::read_to_string(s.0.join("common/values.yaml")).unwrap();
    // certgen's default: each cluster mints its own CA.
    s.write(
        "common/values.yaml",
        &common.replace("method: certmanager", "method: cronJob"),
    );
    let doc = report(&s);
    assert_eq!(only_check(&doc), ["no-shared-ca"], "{doc:#}");
    let f = &findings(&doc, "no-shared-ca")[0];
    assert!(f.0.contains("clusters eu-1, eu-2, us-1"), "{}", f.0);
    assert!(f.0.contains("#22872"), "{}", f.0);
    let path = "clustermesh.apiserver.tls.auto.method";
    assert_eq!(
        f.1,
        CLUSTERS
            .iter()
            .map(|c| place(&format!("clusters/{c}"), "common/values.yaml", 30, path))
            .collect::<Vec<_>>()
    );
    // Certificates per peer (the chart's deprecated way) need no shared CA.
    let per_peer = common.replace("method: certmanager", "method: cronJob").replace(
        "        port: 2379\n",
        "        port: 2379\n        tls:\n          cert: Q0VSVA==\n          key: S0VZ\n          caCert: Q0E=\n",
    );
    s.write("common/values.yaml", &per_peer);
    let doc = report(&s);
    assert_eq!(only_check(&doc), Vec::<String>::new(), "{doc:#}");
    assert_eq!(
        doc["meshes"][0]["clusters"][0]["ca"],
        "certificates per peer in clustermesh.config.clusters"
    );
    // With an external kvstore the chart makes no apiserver certificates at all.
    s.write(
        "common/values.yaml",
        &common.replace(
            "  apiserver:\n",
            "  apiserver:\n    kvstoremesh:\n      kvstoreMode: external\n",
        ),
    );
    let doc = report(&s);
    assert_eq!(only_check(&doc), ["no-shared-ca"], "{doc:#}");
    let f = &findings(&doc, "no-shared-ca")[0];
    assert_eq!(
        f.1[0],
        place(
            "clusters/eu-1",
            "common/values.yaml",
            23,
            "clustermesh.apiserver.kvstoremesh.kvstoreMode"
        )
    );
    // The chart's own default (helm, rendered as cronJob) is the same: the default's place.
    let start = common.find("  apiserver:\n").unwrap();
    let end = common.find("hubble:\n").unwrap();
    s.write(
        "common/values.yaml",
        &format!("{}{}", &common[..start], &common[end..]),
    );
    let doc = report(&s);
    let f = &findings(&doc, "no-shared-ca")[0];
    assert_eq!(f.1[0].1, "", "{doc:#}");
    // A cilium-ca Secret made beforehand, declared by every folder.
    for c in CLUSTERS {
        let settings = format!("clusters/{c}/cilium-cmp.yaml");
        let text = std::fs::read_to_string(s.0.join(&settings)).unwrap();
        s.write(
            &settings,
            &format!("{text}clusterMesh:\n  sharedCA: preCreated\n"),
        );
    }
    assert_eq!(only_check(&report(&s)), Vec::<String>::new());
}

fn a_values_ca_is_shared_only_when_every_member_has_the_same() {
    let s = fleet();
    let common = std::fs::read_to_string(s.0.join("common/values.yaml")).unwrap();
    let without_cert_manager = common.replace("method: certmanager", "method: cronJob");
    // Not a real key: the checks compare the text only.
    let ca = |n: &str| {
        format!("tls:\n  ca:\n    cert: RVhBTVBMRS1DRVJU{n}\n    key: RVhBTVBMRS1LRVk{n}\n")
    };
    s.write(
        "common/values.yaml",
        &format!("{without_cert_manager}{}", ca("A")),
    );
    assert_eq!(only_check(&report(&s)), Vec::<String>::new());
    let own = cluster_values("us-1", "3", "10.3.0.0/16");
    s.write("clusters/us-1/values.yaml", &format!("{own}{}", ca("B")));
    let doc = report(&s);
    assert_eq!(only_check(&doc), ["different-cas"], "{doc:#}");
    let f = &findings(&doc, "different-cas")[0];
    let files: Vec<(String, String)> = f.1.iter().map(|p| (p.0.clone(), p.1.clone())).collect();
    assert!(
        files.contains(&("clusters/us-1".into(), "clusters/us-1/values.yaml".into())),
        "{files:?}"
    );
    assert!(
        files.contains(&("clusters/eu-1".into(), "common/values.yaml".into())),
        "{files:?}"
    );
    // cert-manager issuers must be one too.
    s.write(
        "clusters/us-1/values.yaml",
        &format!("{own}clustermesh:\n  apiserver:\n    tls:\n      auto:\n        method: certmanager\n        certManagerIssuerRef:\n          group: cert-manager.io\n          kind: ClusterIssuer\n          name: other-ca\n"),
    );
    s.write("common/values.yaml", &common);
    let doc = report(&s);
    assert_eq!(only_check(&doc), ["different-cas"], "{doc:#}");
    assert!(findings(&doc, "different-cas")[0].0.contains("other-ca"));
}

fn folders_that_run_an_apiserver_without_peers_mesh_with_each_other() {
    // Connected outside the chart (`cilium clustermesh connect`): every folder with
    // clustermesh.useAPIServer is taken to mesh with the others.
    let s = Scratch::new("fleet-implicit");
    for (name, id) in [("a", 1), ("b", 1)] {
        s.write(
            &format!("{name}/cilium-cmp.yaml"),
            "ciliumVersion: \"1.19.6\"\nclusterMesh:\n  sharedCA: preCreated\n",
        );
        s.write(
            &format!("{name}/values.yaml"),
            &format!("cluster:\n  name: {name}\n  id: {id}\nclustermesh:\n  useAPIServer: true\n"),
        );
    }
    s.write("plain/cilium-cmp.yaml", "ciliumVersion: \"1.19.6\"\n");
    s.write("plain/values.yaml", "cluster:\n  name: plain\n");
    let doc = report(&s);
    assert_eq!(doc["folders"], 3);
    assert_eq!(doc["meshes"].as_array().unwrap().len(), 1);
    assert_eq!(
        only_check(&doc),
        ["duplicate-cluster-id", "pod-cidr-overlap"],
        "{doc:#}"
    );
    // Asked about the folder outside any mesh: nothing to report.
    let r = run(&s.0, &["fleet-check", "plain"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("no Cluster Mesh to report"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("0 meshes"), "{}", r.stdout);
    let r = run(&s.0, &["fleet-check", "a"]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
}

fn clusters_that_name_one_peer_outside_the_repository_share_its_mesh() {
    // The hub sees both spokes, so they must differ in name and ID although neither names the
    // other.
    let s = Scratch::new("fleet-hub");
    for name in ["spoke-a", "spoke-b"] {
        s.write(
            &format!("{name}/cilium-cmp.yaml"),
            "ciliumVersion: \"1.20.0\"\nclusterMesh:\n  externalPeers: [hub]\n  sharedCA: preCreated\n",
        );
        s.write(
            &format!("{name}/values.yaml"),
            &format!("cluster:\n  name: {name}\n  id: 9\nipam:\n  mode: kubernetes\nclustermesh:\n  useAPIServer: true\n  config:\n    enabled: true\n    clusters:\n      hub:\n        address: hub.example.com\n"),
        );
    }
    let doc = report(&s);
    assert_eq!(doc["meshes"].as_array().unwrap().len(), 1, "{doc:#}");
    assert_eq!(doc["meshes"][0]["external"], serde_json::json!(["hub"]));
    assert_eq!(only_check(&doc), ["duplicate-cluster-id"], "{doc:#}");
    // Alone with its outside peer, a cluster still needs the mesh's CA.
    std::fs::remove_dir_all(s.0.join("spoke-b")).unwrap();
    s.write(
        "spoke-a/cilium-cmp.yaml",
        "ciliumVersion: \"1.20.0\"\nclusterMesh:\n  externalPeers: [hub]\n",
    );
    assert_eq!(only_check(&report(&s)), ["no-shared-ca"]);
}

fn bad_input_is_refused_with_nothing_on_stdout() {
    let s = fleet();
    let cases: [(&str, &str, &str); 4] = [
        (
            "clusterMesh:\n  externalPeer: [x]\n",
            "cilium-cmp.yaml:8",
            "unknown key clusterMesh.\"externalPeer\"; valid keys: externalPeers, sharedCA",
        ),
        (
            "clusterMesh:\n  sharedCA: yes\n",
            "cilium-cmp.yaml:8",
            "clusterMesh.sharedCA must be preCreated",
        ),
        (
            "clusterMesh:\n  externalPeers: legacy\n",
            "cilium-cmp.yaml:8",
            "clusterMesh.externalPeers must be a list of cluster names",
        ),
        (
            "clusterMesh:\n  externalPeers: [1]\n",
            "cilium-cmp.yaml:8",
            "clusterMesh.externalPeers[0] must be a cluster name",
        ),
    ];
    let settings = "clusters/eu-2/cilium-cmp.yaml";
    let original = std::fs::read_to_string(s.0.join(settings)).unwrap();
    for (extra, at, message) in cases {
        s.write(settings, &format!("{original}{extra}"));
        let r = run(&s.0, &["fleet-check"]);
        assert_eq!(r.code, 1, "{extra}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{extra}");
        assert!(
            r.stderr.contains(&format!("clusters/eu-2/{at}")),
            "{extra}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(message), "{extra}: {}", r.stderr);
    }
    s.write(settings, &original);
    for args in [
        &["fleet-check", "--repo-root", "no-such-folder"][..],
        &["fleet-check", "common"],
        &["fleet-check", "--cilium-version", "0.1.0"],
    ] {
        let r = run(&s.0, args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{args:?}");
    }
    // A values file that is not YAML names its file and line.
    s.write("clusters/us-1/values.yaml", "cluster: [\n");
    let r = run(&s.0, &["fleet-check"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("clusters/us-1/values.yaml:"),
        "{}",
        r.stderr
    );
}

fn the_search_stays_inside_the_repository() {
    let outside = Scratch::new("fleet-outside");
    outside.write("elsewhere/cilium-cmp.yaml", "ciliumVersion: \"1.20.0\"\n");
    outside.write("elsewhere/values.yaml", "cluster:\n  name: elsewhere\n");
    let s = fleet();
    // A link to a folder outside is not entered: the fleet stays three folders.
    std::os::unix::fs::symlink(outside.0.join("elsewhere"), s.0.join("clusters/linked")).unwrap();
    let doc = report(&s);
    assert_eq!(doc["folders"], 3, "{doc:#}");
    // A settings file that links outside is refused, as the plugin refuses it.
    std::fs::create_dir_all(s.0.join("clusters/sneaky")).unwrap();
    std::os::unix::fs::symlink(
        outside.0.join("elsewhere/cilium-cmp.yaml"),
        s.0.join("clusters/sneaky/cilium-cmp.yaml"),
    )
    .unwrap();
    let r = run(&s.0, &["fleet-check"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("outside the repository"), "{}", r.stderr);
    std::fs::remove_file(s.0.join("clusters/sneaky/cilium-cmp.yaml")).unwrap();
    // Folders nested deeper than the bound are refused, not walked forever.
    let deep: String = (0..40).map(|i| format!("d{i}/")).collect();
    std::fs::create_dir_all(s.0.join(&deep)).unwrap();
    let r = run(&s.0, &["fleet-check"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("deeper than 32"), "{}", r.stderr);
}

/// The ApplicationSet's git directory generator, applied to the repository: each folder it
/// matches becomes the Application its template describes (`{{.path.path}}` and
/// `{{.path.basename}}` as Argo CD fills them in).
fn the_application_set_makes_one_plugin_application_per_folder() {
    let text = std::fs::read_to_string(root().join("examples/fleet/applicationset.yaml")).unwrap();
    let set = cilium_cmp_yaml::yaml::parse_value(&text).unwrap();
    assert_eq!(set["apiVersion"], "argoproj.io/v1alpha1");
    assert_eq!(set["kind"], "ApplicationSet");
    assert_eq!(set["spec"]["goTemplate"], true);
    let generators = set["spec"]["generators"].as_array().unwrap();
    assert_eq!(generators.len(), 1);
    let git = &generators[0]["git"];
    let dirs = git["directories"].as_array().unwrap();
    assert_eq!(dirs.len(), 1);
    let pattern = dirs[0]["path"].as_str().unwrap();
    let prefix = pattern
        .strip_suffix("/*")
        .expect("one folder level below a prefix");
    // The folders the pattern matches are exactly the application folders of the fleet.
    let mut matched: Vec<String> = std::fs::read_dir(root().join(prefix))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| format!("{prefix}/{}", e.file_name().to_string_lossy()))
        .collect();
    matched.sort();
    assert_eq!(
        matched,
        CLUSTERS.map(|c| format!("examples/fleet/clusters/{c}"))
    );
    // The plugin's name as Applications select it: plugin.yaml's metadata.name (it sets no
    // spec.version, which Argo CD 3.x would append and 4.0 refuses; tests/it/plugin.rs).
    let plugin = cilium_cmp_yaml::yaml::parse_value(
        &std::fs::read_to_string(root().join("plugin.yaml")).unwrap(),
    )
    .unwrap();
    assert!(plugin["spec"].get("version").is_none());
    let plugin_name = plugin["metadata"]["name"].as_str().unwrap().to_string();
    let template = serde_json::to_string(&set["spec"]["template"]).unwrap();
    let mut apps = Vec::new();
    for path in &matched {
        for f in ["cilium-cmp.yaml", "values.yaml"] {
            assert!(root().join(path).join(f).is_file(), "{path}/{f}");
        }
        let base = path.rsplit('/').next().unwrap();
        let filled = template
            .replace("{{.path.path}}", path)
            .replace("{{.path.basename}}", base);
        assert!(!filled.contains("{{"), "{filled}");
        let spec: Value = serde_json::from_str(&filled).unwrap();
        let mut app = serde_json::json!({
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": spec["metadata"],
            "spec": spec["spec"],
        });
        app["metadata"]["namespace"] = "argocd".into();
        assert_eq!(
            app["spec"]["source"]["plugin"]["name"],
            plugin_name.as_str()
        );
        assert_eq!(app["spec"]["source"]["path"], path.as_str());
        assert_eq!(app["spec"]["destination"]["namespace"], "kube-system");
        assert_eq!(app["metadata"]["name"], format!("cilium-{base}"));
        // The recommended Application's sync options and ignored kinds, as in
        // sidecar/argocd/application.yaml.
        let recommended = cilium_cmp_yaml::yaml::parse_value(
            &std::fs::read_to_string(root().join("sidecar/argocd/application.yaml")).unwrap(),
        )
        .unwrap();
        assert_eq!(app["spec"]["syncPolicy"], recommended["spec"]["syncPolicy"]);
        assert_eq!(
            app["spec"]["ignoreDifferences"],
            recommended["spec"]["ignoreDifferences"]
        );
        apps.push(app);
    }
    let crd = harness::shared("schemas/argoproj.io-application-crd.yaml");
    let python = harness::python();
    let s = Scratch::new("fleet-appset");
    let apps_file = s.write("apps.json", &serde_json::to_string(&apps).unwrap());
    let o = Command::new(python)
        .args(["-c", VALIDATE])
        .env("PYTHONPATH", root().join("tests/it/support"))
        .arg(&crd)
        .arg(&apps_file)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "valid 3");
}

/// Argo CD's Application schema, with unknown fields refused (as the API server prunes them).
const VALIDATE: &str = r#"
import json, sys
import application_schema
v = application_schema.validator(sys.argv[1])
apps = json.load(open(sys.argv[2]))
errors = ["%s: %s at %s" % (a["metadata"]["name"], e.message, "/".join(map(str, e.absolute_path))) for a in apps for e in v.iter_errors(a)]
if errors: sys.exit("\n".join(errors))
print("valid %d" % len(apps))
"#;

/// Every `cilium-cmp` command in docs/fleet.md's shell blocks runs in a repository laid out as
/// the example fleet and ends as the page says a check ends (0 or 3), never with a usage error.
fn the_commands_of_the_fleet_page_exist() {
    let page = std::fs::read_to_string(root().join("docs/fleet.md")).unwrap();
    let mut in_sh = false;
    let mut commands = Vec::new();
    for line in page.lines() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            in_sh = !in_sh && (lang == "sh" || lang == "bash");
            continue;
        }
        let line = line.split(" #").next().unwrap().trim();
        if in_sh && line.starts_with("cilium-cmp ") {
            commands.push(line.to_string());
        }
    }
    assert!(commands.len() >= 3, "{commands:?}");
    let s = fleet();
    for c in &commands {
        let words: Vec<&str> = c.split_whitespace().skip(1).collect();
        let r = run(&s.0, &words);
        assert!(
            r.code == 0 || r.code == 3,
            "{c}: exit {}\n{}",
            r.code,
            r.stderr
        );
    }
}
