"""The reference kubelet: one per node (`nodes.Kubelets`), preparing and unpreparing the claims of its pods
through the drivers' kubelet plugins (`kubelet.Kubelet`, `plugins`), with a checkpoint per node."""
