"""The deploy files, read as the tools that run them would: the Kubernetes manifests against the
API's own schemas (kubernetes-validate, strict: an unknown or misspelt field fails), the compose
file for the promises the README makes of it (no cluster runs here, nor a compose engine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
KUBERNETES_VERSIONS = ["1.30.0", "1.37.0"]  # the oldest with a preStop sleep action, the newest known


def manifests() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    return [yaml.safe_load((K8S / name).read_text()) for name in kustomization["resources"]]


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return loaded


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_is_valid_kubernetes(version: str) -> None:
    for manifest in manifests():
        kubernetes_validate.validate(manifest, version, strict=True)


def test_the_pods_are_probed_drained_and_budgeted() -> None:
    by_kind = {manifest["kind"]: manifest for manifest in manifests()}
    pod = by_kind["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert "preStop" in container["lifecycle"]
    assert "cpu" in container["resources"]["limits"], "the worker count comes from the CPU limit"
    seed_key = next(variable for variable in container["env"] if variable["name"] == "DONJON_SEED_KEY")
    assert "secretKeyRef" in seed_key["valueFrom"], "the seed key comes from a Secret, not the manifest"
    assert by_kind["PodDisruptionBudget"]["spec"]["selector"] == by_kind["Deployment"]["spec"]["selector"]
    assert by_kind["Deployment"]["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


def test_every_long_running_compose_service_has_a_healthcheck() -> None:
    services = compose()["services"]
    for name, service in services.items():
        if name.startswith(("api", "capi", "redis", "valkey", "postgres")):
            assert "healthcheck" in service, f"{name} has no healthcheck"
    for balancer in ("lb", "lb-cluster"):
        conditions = {dependency["condition"] for dependency in services[balancer]["depends_on"].values()}
        assert conditions == {"service_healthy"}, "the balancer waits for ready nodes"


def test_the_cluster_profile_has_a_replica_for_every_master() -> None:
    services = compose()["services"]
    valkeys = [name for name in services if name.startswith("valkey")]
    command = services["cluster-init"]["command"]
    assert command[2:] == valkeys and len(valkeys) == 6
    script = (ROOT / "deploy" / "cluster-init.sh").read_text()
    assert '--cluster-replicas "${DONJON_REPLICAS:-1}"' in script


def test_the_nodes_share_one_seed_key_and_set_no_per_node_key() -> None:
    for name, service in compose()["services"].items():
        environment = service.get("environment") or {}
        if name.startswith(("api", "capi")):
            assert environment["DONJON_SEED_KEY"].startswith("${DONJON_SEED_KEY:?")
            assert "DONJON_SIGNING_KEY" not in environment, "the deployment's signing key lives in the store"


def test_every_node_archives_into_a_migrated_postgresql() -> None:
    services = compose()["services"]
    for name, service in services.items():
        if name.startswith(("api", "capi")):
            url = service["environment"]["DONJON_ARCHIVE_URL"]
            assert url.startswith("postgresql://") and "@postgres:5432/" in url
            migrate = "archive-migrate" if name.startswith("api") else "archive-migrate-cluster"
            assert service["depends_on"][migrate]["condition"] == "service_completed_successfully"
            assert services[migrate]["environment"]["DONJON_ARCHIVE_URL"] == url, "migrated where it archives"
            assert services[migrate]["command"] == ["donjon", "archive", "migrate"]
    pod = next(m for m in manifests() if m["kind"] == "Deployment")["spec"]["template"]["spec"]
    [init] = pod["initContainers"]
    assert init["args"] == ["donjon", "archive", "migrate"]
    for container in (init, pod["containers"][0]):
        archive = next(variable for variable in container["env"] if variable["name"] == "DONJON_ARCHIVE_URL")
        assert archive["valueFrom"]["secretKeyRef"]["key"] == "archive-url"
