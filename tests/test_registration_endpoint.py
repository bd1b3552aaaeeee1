"""Issue 42: a live layout's link to a real plugin's socket names the socket the plugin registered."""

from __future__ import annotations

from pathlib import Path

from draconform.kubeletplugin.judge import same_socket


def test_a_link_to_the_registered_socket_is_the_same_socket_and_another_socket_is_not(tmp_path: Path) -> None:
    # Files stand for the sockets: the comparison is of file identity, whatever the file's type.
    real, other = tmp_path / "dra.sock", tmp_path / "other.sock"
    real.touch()
    other.touch()
    link = tmp_path / "gpu.example.com.sock"
    link.symlink_to(real)
    assert same_socket(str(real), str(real))
    assert same_socket(str(real), str(link))
    assert not same_socket(str(real), str(other))
    assert not same_socket(str(real), str(tmp_path / "missing.sock"))
