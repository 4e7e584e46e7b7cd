package catalog

// Docker runs the server in a container of a locally available image, its
// datadir bind-mounted from a temporary directory on the host.
const Docker ProviderName = "docker"

// DefaultDockerImage is the image scripts/build-mariadb-image.sh builds
// (make docker-image): Debian's mariadb-server, no registry needed.
const DefaultDockerImage = "benchmatrix/mariadb:10.11"

var dockerProvider = Descriptor{
	Name:         Docker,
	Doc:          "a container of a local image (make docker-image builds " + DefaultDockerImage + ")",
	Keys:         []string{"image", "tmpdir"},
	Caps:         Caps(Liveness, PID, Restarts, Images, Limits, Profiles, Topologies),
	DefaultImage: DefaultDockerImage,
}
