package slap

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestParseLikeMariaDBSlap(t *testing.T) {
	cases := []struct {
		args  string
		code  int    // 0: parses
		msg   string // in the error or the info output
		check func(c Config) bool
	}{
		{"-a --engine=myisam,innodb --auto-generate-sql-load-type=write --number-of-queries 1000 --iterations=5", 0, "",
			func(c Config) bool {
				return c.AutoGenerate && len(c.Engines) == 2 && c.Engines[1].Name == "innodb" && c.NumberOfQueries == 1000 && c.Iterations == 5
			}},
		{"-ac5 -i2 -vvv", 0, "", func(c Config) bool {
			return c.AutoGenerate && c.Concurrency[0] == 5 && c.Iterations == 2 && c.Verbose == 3
		}},
		{"--concurrency=1,10,50 -a", 0, "", func(c Config) bool { return len(c.Concurrency) == 3 && c.Concurrency[2] == 50 }},
		{"--iter=3 -a", 0, "Using unique option prefix 'iter'", func(c Config) bool { return c.Iterations == 3 }},
		{"--number_of_queries=2k -a", 0, "", func(c Config) bool { return c.NumberOfQueries == 2048 }},
		{"--csv -a", 0, "", func(c Config) bool { return c.CSV == "-" && c.Silent }},
		{"--csv=/tmp/x.csv -a", 0, "", func(c Config) bool { return c.CSV == "/tmp/x.csv" }},
		{"-psecret -u bench -h db1 -a", 0, "", func(c Config) bool { return c.Password == "secret" && c.User == "bench" && c.Host == "db1" }},
		{"-p -a", 0, "", func(c Config) bool { return c.PasswordPrompt }},
		{"--skip-auto-generate-sql --query=x", 0, "", func(c Config) bool { return !c.AutoGenerate }},
		{"--loose-foo -a", 0, "unknown option '--loose-foo'", nil},
		{"--no-defaults -a", 0, "", nil},
		{"-y 3:1 -x 2 -a", 0, "", func(c Config) bool { return c.IntCols == 3 && c.IntColsIndex == 1 && c.CharCols == 2 }},
		{"--foo", exitUnknownOption, "unknown option '--foo'", nil},
		{"-Z", exitUnknownOption, "unknown option '-Z'", nil},
		{"--i=1", exitAmbiguousOption, "ambiguous option '--i=1' (init-command, iterations)", nil},
		{"--iterations", exitArgRequired, "requires an argument", nil},
		{"--verbose=2", exitNoArgAllowed, "cannot take an argument", nil},
		{"--iterations=abc", exitUnknownSuffix, "Unknown suffix 'a' used for variable 'iterations'", nil},
		{"-a --auto-generate-sql-load-type=key", exitFailure, "Can't perform key test without a primary key!", nil},
		{"-a --query=x", exitFailure, "Can't use --auto-generate-sql when create and query strings are specified!", nil},
		{"-a --auto-generate-sql-guid-primary --auto-generate-sql-add-autoincrement", exitFailure, "Either auto-generate-sql-guid-primary", nil},
		{"-a --number-of-queries=5 --auto-generate-sql-execute-number=5", exitFailure, "Either auto-generate-sql-execute-number", nil},
		{"-a a b c", exitFailure, "Too many arguments", nil},
	}
	for _, tc := range cases {
		var info bytes.Buffer
		c, err := Parse(splitArgs(tc.args), &info)
		code := 0
		if err != nil {
			ue, ok := err.(*UsageError)
			if !ok {
				t.Errorf("%s: %v is not a usage error", tc.args, err)
				continue
			}
			code = ue.Code
		}
		if code != tc.code {
			t.Errorf("%s: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		text := info.String()
		if err != nil {
			text += err.Error()
		}
		if tc.msg != "" && !strings.Contains(text, tc.msg) {
			t.Errorf("%s: %q does not say %q", tc.args, text, tc.msg)
		}
		if tc.check != nil && err == nil && !tc.check(c) {
			t.Errorf("%s: parsed as %+v", tc.args, c)
		}
	}
}

// TestPasswordNeverPrinted: a failing connection's message names the
// server, never the password.
func TestPasswordNeverPrinted(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"-h", "127.0.0.1", "-P", "1", "-u", "bench", "-pTopSecret42", "-a"}, nil, &out, &errb)
	if code != exitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	all := out.String() + errb.String()
	if strings.Contains(all, "TopSecret42") {
		t.Errorf("the password is printed: %s", all)
	}
	if !strings.Contains(all, "Error when connecting to server") {
		t.Errorf("no connection error: %s", all)
	}
}

func TestManifestKeys(t *testing.T) {
	c := ManifestConfig()
	for k, v := range map[string]string{"load_type": "update", "engine": "innodb", "threads": "4", "number_of_queries": "1000",
		"iterations": "5", "number_int_cols": "2:1", "auto_generate_sql_add_autoincrement": "true"} {
		if err := c.SetKey(k, v); err != nil {
			t.Fatalf("%s = %s: %v", k, v, err)
		}
	}
	if err := c.Finish(false); err != nil {
		t.Fatal(err)
	}
	if !c.AutoGenerate || c.Concurrency[0] != 4 || c.IntColsIndex != 1 || c.Engines[0].Name != "innodb" {
		t.Errorf("%+v", c)
	}
	for k, v := range map[string]string{"load_type": "sideways", "concurrency": "0", "engine": "myisam,innodb", "iterations": "0", "tabels": "1"} {
		c := ManifestConfig()
		if err := c.SetKey(k, v); err == nil {
			t.Errorf("%s = %s accepted", k, v)
		}
	}
}
