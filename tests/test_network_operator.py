"""nic-cluster-policy.yaml pins the images of the Network Operator release the spec names
(outputs.k8s.network_operator), repository and tag as that release lists them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fabricc.emit.provisioning.network_operator import IMAGES
from fabricc.errors import FabriccError
from tests.support import EXAMPLES, compile_text, compiled


def _images(policy: dict[str, object]) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if {"image", "repository", "version"} <= node.keys():
                found.append(node)
            for value in node.values():
                walk(value)

    walk(policy)
    return found


@pytest.mark.parametrize("example", ["gb200-nvl72-su", "roce-lab", "spectrum-x-2plane"])
def test_default_release_pulls_from_nvidias_registry(example: str) -> None:
    _, artifacts = compiled(example)
    text = dict(artifacts)["provisioning/k8s/nic-cluster-policy.yaml"]
    assert isinstance(text, str)
    images = _images(yaml.safe_load(text))
    assert images
    for entry in images:
        assert entry["repository"] == "nvcr.io/nvidia/mellanox", entry
        assert entry["version"] == "network-operator-v25.7.0", entry
    assert "ghcr.io" not in text


def test_the_spec_names_the_release(tmp_path: Path) -> None:
    text = (EXAMPLES / "roce-lab.yaml").read_text()
    text += "\noutputs:\n  k8s:\n    network_operator: '25.4.0'\n"
    _, artifacts = compile_text(text, tmp_path)
    policy = yaml.safe_load(dict(artifacts)["provisioning/k8s/nic-cluster-policy.yaml"])
    spec = policy["spec"]
    assert spec["rdmaSharedDevicePlugin"]["repository"] == "ghcr.io/mellanox"
    assert spec["rdmaSharedDevicePlugin"]["version"] == "v1.5.3"
    assert spec["secondaryNetwork"]["multus"] == {
        "image": "multus-cni",
        "repository": "ghcr.io/k8snetworkplumbingwg",
        "version": "v4.1.0",
    }


def test_an_unknown_release_is_an_error_at_its_line(tmp_path: Path) -> None:
    text = (EXAMPLES / "roce-lab.yaml").read_text()
    lines = text.count("\n")
    text += "\noutputs:\n  k8s:\n    network_operator: '24.1.0'\n"
    with pytest.raises(FabriccError) as caught:
        compile_text(text, tmp_path)
    assert f"spec.yaml:{lines + 4}:" in str(caught.value)
    assert "network_operator" in str(caught.value)


def test_releases_pair_nvidia_tags_with_nvidias_registry() -> None:
    """network-operator-vX tags live on nvcr.io/nvidia/mellanox (Network Operator
    documentation); each release lists the same components."""
    components = {frozenset(images) for images in IMAGES.values()}
    assert len(components) == 1
    for release, images in IMAGES.items():
        for repository, _, tag in images.values():
            assert (tag == f"network-operator-v{release}") == (
                repository == "nvcr.io/nvidia/mellanox"
            ), (release, repository, tag)
