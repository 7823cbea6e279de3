"""Emit stage, provisioning: the container images of NVIDIA Network Operator releases.

Consumes nothing; holds, per release a spec may name (outputs.k8s.network_operator), the
repository, image and tag of each NicClusterPolicy component, as the release itself lists them
in hack/release.yaml of github.com/Mellanox/network-operator at the release tag (the file its
Helm chart values and the documentation's NicClusterPolicy examples are generated from).
nic-cluster-policy.yaml (provisioning/k8s.py) reads them.
"""

from __future__ import annotations

from fabricc.spec.models import NetworkOperatorRelease

Release = NetworkOperatorRelease

# The default, 25.7.0, is the last release whose NicClusterPolicy still has secondaryNetwork.
# ipamPlugin (whereabouts, the IPoIB networks' IPAM here): v25.10.0 dropped it from the API.
Image = tuple[str, str, str]  # repository, image, tag


def _nvcr(tag: str, images: dict[str, str]) -> dict[str, Image]:
    """Components published on NVIDIA's registry with the release's own tag."""
    return {key: ("nvcr.io/nvidia/mellanox", image, tag) for key, image in images.items()}


_COMPONENTS = {
    "rdmaSharedDevicePlugin": "k8s-rdma-shared-dev-plugin",
    "sriovDevicePlugin": "sriov-network-device-plugin",
    "cniPlugins": "plugins",
    "multus": "multus-cni",
    "ipoib": "ipoib-cni",
    "ipamPlugin": "whereabouts",
    "nvIpam": "nvidia-k8s-ipam",
}

IMAGES: dict[Release, dict[str, Image]] = {
    # v25.7.0 hack/release.yaml: every component nvcr.io/nvidia/mellanox, network-operator-v25.7.0
    "25.7.0": _nvcr("network-operator-v25.7.0", _COMPONENTS),
    # v25.4.0 hack/release.yaml: the upstream registries, each component's own version
    "25.4.0": {
        "rdmaSharedDevicePlugin": ("ghcr.io/mellanox", "k8s-rdma-shared-dev-plugin", "v1.5.3"),
        "sriovDevicePlugin": (
            "ghcr.io/k8snetworkplumbingwg",
            "sriov-network-device-plugin",
            "v3.9.0",
        ),
        "cniPlugins": ("ghcr.io/k8snetworkplumbingwg", "plugins", "v1.6.2-update.1"),
        "multus": ("ghcr.io/k8snetworkplumbingwg", "multus-cni", "v4.1.0"),
        "ipoib": ("ghcr.io/mellanox", "ipoib-cni", "v1.2.2"),
        "ipamPlugin": ("ghcr.io/k8snetworkplumbingwg", "whereabouts", "v0.7.0"),
        "nvIpam": ("ghcr.io/mellanox", "nvidia-k8s-ipam", "v0.3.7"),
    },
}


def image(release: Release, key: str) -> dict[str, object]:
    """The NicClusterPolicy image fields of one component."""
    repository, name, version = IMAGES[release][key]
    return {"image": name, "repository": repository, "version": version}
