import pytest

from iclr25.core.packaged import package_file


def test_package_file_finds_a_file_of_an_installed_package_without_importing_it():
    path = package_file("iclr25", "core/packaged.py", "unused")
    assert path.is_file() and path.name == "packaged.py"


@pytest.mark.parametrize(
    ("package", "file"), [("iclr25", "core/no_such_file.txt"), ("no_such_package_x", "a.txt")]
)
def test_package_file_raises_the_install_hint(package, file):
    with pytest.raises(ImportError, match="pip install it"):
        package_file(package, file, "pip install it")
