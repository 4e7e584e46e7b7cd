package server

import (
	"reflect"
	"strings"
	"testing"

	"benchmatrix/catalog"
)

// The probe's output as each kind of image answers it: an official MySQL
// image (its --version line as MySQL's documentation shows it), the
// project's MariaDB image (as run here), a server whose help names no
// plugin directory, and an image whose --version says nothing usable.
func TestParseDockerProbe(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, out string
		want      DockerImage
		err       string
	}{
		{"mysql 8.4", "server: mysqld\nversion: /usr/sbin/mysqld  Ver 8.4.3 for Linux on x86_64 (MySQL Community Server - GPL)\nplugin-dir: /usr/lib64/mysql/plugin/\nplugin: group_replication.so\nplugin: keyring_udf.so\n",
			DockerImage{Image: "mysql:8.4", Server: Binary{Path: "mysqld in mysql:8.4", Flavor: catalog.MySQL, Version: "8.4.3"},
				PluginDir: "/usr/lib64/mysql/plugin/", Plugins: []string{"group_replication.so", "keyring_udf.so"}}, ""},
		{"mariadb", "server: mysqld\nversion: mysqld  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\nplugin-dir: /usr/lib/mysql/plugin/\nplugin: auth_ed25519.so\n",
			DockerImage{Image: "mysql:8.4", Server: Binary{Path: "mysqld in mysql:8.4", Flavor: catalog.MariaDB, Version: "10.11.19-MariaDB-0+deb12u1"},
				PluginDir: "/usr/lib/mysql/plugin/", Plugins: []string{"auth_ed25519.so"}}, ""},
		{"guessed dir", "server: mysqld\nversion: mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)\nplugin-dir-guessed: yes\nplugin-dir: /usr/lib/mysql/plugin\n",
			DockerImage{Image: "mysql:8.4", Server: Binary{Path: "mysqld in mysql:8.4", Flavor: catalog.MySQL, Version: "8.0.36"},
				PluginDir: "/usr/lib/mysql/plugin", PluginDirGuessed: true}, ""},
		{"no version", "server: mysqld\nversion: \nplugin-dir: \n", DockerImage{}, "mysqld --version printed"},
	} {
		got, err := parseDockerProbe(DockerImage{Image: "mysql:8.4"}, c.out)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error saying %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v %v\nwant %+v", c.name, got, err, c.want)
		}
		if got.HasPlugin("group_replication.so") != (c.name == "mysql 8.4") {
			t.Errorf("%s: HasPlugin %v", c.name, got.HasPlugin("group_replication.so"))
		}
	}
}
