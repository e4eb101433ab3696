package nbd

import (
	"runtime"
	"strings"
	"testing"
)

func TestParseURI(t *testing.T) {
	tcp := func(host string, port int, export string) URI {
		return URI{Transport: "tcp", Host: host, Port: port, Export: export}
	}
	unix := func(sock, export string) URI {
		return URI{Transport: "unix", Socket: sock, Export: export}
	}
	tests := []struct {
		in   string
		want URI
	}{
		{"nbd://localhost", tcp("localhost", 10809, "")},
		{"nbd://localhost/", tcp("localhost", 10809, "")},
		{"nbd://localhost/disk", tcp("localhost", 10809, "disk")},
		{"nbd://localhost:10810/disk", tcp("localhost", 10810, "disk")},
		{"nbd://localhost:/disk", tcp("localhost", 10809, "disk")},
		{"nbd://h:1", tcp("h", 1, "")},
		{"nbd://h:65535/", tcp("h", 65535, "")},
		{"nbd://h:010809/", tcp("h", 10809, "")},
		{"nbd://example.com//disk", tcp("example.com", 10809, "/disk")},
		{"nbd://h/a/b", tcp("h", 10809, "a/b")},
		{"nbd://h/a%2Fb", tcp("h", 10809, "a/b")},
		{"nbd://h/a%20b", tcp("h", 10809, "a b")},
		{"nbd://h/a+b", tcp("h", 10809, "a+b")},
		{"nbd://h/%C3%A9", tcp("h", 10809, "é")},
		{"nbd://h/é", tcp("h", 10809, "é")},
		{"nbd://h/a%3Fb%23c", tcp("h", 10809, "a?b#c")},
		{"nbd://h/%2F", tcp("h", 10809, "/")},
		{"nbd://h/?", tcp("h", 10809, "")},
		{"nbd://h/e?&&", tcp("h", 10809, "e")},
		{"nbd://192.168.0.1:1234/e", tcp("192.168.0.1", 1234, "e")},
		{"nbd://[::1]/x", tcp("::1", 10809, "x")},
		{"nbd://[::1]:1234", tcp("::1", 1234, "")},
		{"nbd://[2001:db8::7]:10809/", tcp("2001:db8::7", 10809, "")},
		{"nbd://[fe80::1%25eth0]:10809/", tcp("fe80::1%eth0", 10809, "")},
		{"nbd://my_host.local./e", tcp("my_host.local.", 10809, "e")},
		{"NBD://Host/E", tcp("Host", 10809, "E")},
		{"nbd+tcp://h/e", tcp("h", 10809, "e")},
		{"nbd+unix:///?socket=/tmp/s.sock", unix("/tmp/s.sock", "")},
		{"nbd+unix://?socket=/tmp/s.sock", unix("/tmp/s.sock", "")},
		{"nbd+unix:///disk?socket=/tmp/s", unix("/tmp/s", "disk")},
		{"nbd+unix:////disk?socket=s", unix("s", "/disk")},
		{"nbd+unix:/disk?socket=/s", unix("/s", "disk")},
		{"nbd+unix:///?socket=rel/s.sock", unix("rel/s.sock", "")},
		{"nbd+unix:///?socket=%2Ftmp%2Fa%20b.sock", unix("/tmp/a b.sock", "")},
		{"nbd+unix:///?socket=/tmp/a+b", unix("/tmp/a+b", "")},
		{"nbd+unix:///?socket=/tmp/a%2Bb%26c%3Dd", unix("/tmp/a+b&c=d", "")},
		{"nbd+unix:///?socket=/tmp/a=b", unix("/tmp/a=b", "")},
		{"nbd+unix:///e?socket=/s&", unix("/s", "e")},
		{"nbd+unix:///e?&socket=/s", unix("/s", "e")},
		{"nbd+unix:///e?soc%6Bet=/s", unix("/s", "e")},
		{"NBD+UNIX:///?socket=/s", unix("/s", "")},
	}
	if runtime.GOOS == "linux" {
		tests = append(tests, struct {
			in   string
			want URI
		}{"nbd+unix:///e?socket=%00abstract", unix("\x00abstract", "e")})
	}
	for _, tt := range tests {
		got, err := ParseURI(tt.in)
		if err != nil {
			t.Errorf("ParseURI(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseURI(%q) = %+v, want %+v", tt.in, got, tt.want)
			continue
		}
		s := got.String()
		back, err := ParseURI(s)
		if err != nil || back != got {
			t.Errorf("ParseURI(%q).String() = %q, which parses to %+v, %v", tt.in, s, back, err)
		}
	}
}

func TestParseURIErrors(t *testing.T) {
	tests := []struct {
		in      string
		errPart string
	}{
		{"", "no scheme"},
		{"/tmp/nbd.sock", "no scheme"},
		{"//host/e", "no scheme"},
		{"localhost:10809", `unknown scheme "localhost"`},
		{"http://h/", `unknown scheme "http"`},
		{"nbd+ssh://h/", `unknown scheme "nbd+ssh"`},
		{"nbd:localhost:10809", "is not supported; write nbd://HOST:PORT/EXPORT"},
		{"nbd:unix:/tmp/s", "is not supported"},
		{"nbds://h/", "needs TLS, which is not supported"},
		{"nbds+unix:///?socket=/s", "needs TLS"},
		{"nbds+vsock://1/", "needs TLS"},
		{"nbd+vsock://1:10809/", "vsock transport (nbd+vsock) is not supported"},
		{"nbd:///export", "no host"},
		{"nbd://:10809/", "no host"},
		{"nbd://", "no host"},
		{"nbd://user@h/", "user info"},
		{"nbd://user:pw@h/", "user info"},
		{"nbd+unix://user@/?socket=/s", "user info"},
		{"nbd://h/?tls-type=psk", `query parameter "tls-type" is for TLS`},
		{"nbd://h/?tls-hostname=x", `"tls-hostname" is for TLS`},
		{"nbd://h/?tls-verify-peer=false", `"tls-verify-peer"`},
		{"nbd+unix:///?socket=/s&tls-psk-file=/k", `"tls-psk-file" is for TLS`},
		{"nbd://h/?foo=bar", `unknown query parameter "foo"`},
		{"nbd://h/?x-foo=1", `unknown query parameter "x-foo"`},
		{"nbd://h/?Socket=/s", `unknown query parameter "Socket"`},
		{"nbd+unix:///?socket=/s&export=e", `unknown query parameter "export"`},
		{"nbd://h/?socket=/s", `"socket" is only valid with nbd+unix://`},
		{"nbd+unix:///", "needs the socket path"},
		{"nbd+unix:///e", "needs the socket path"},
		{"nbd+unix:///?socket=", "socket path (socket=) is empty"},
		{"nbd+unix:///?socket", "socket path (socket=) is empty"},
		{"nbd+unix:///?socket=/a&socket=/b", "given twice"},
		{"nbd+unix://h/?socket=/s", "takes no host or port"},
		{"nbd+unix://:10/?socket=/s", "takes no host or port"},
		{"nbd+unix://[::1]/?socket=/s", "takes no host or port"},
		{"nbd+unix:///?socket=/a%00b", "NUL byte"},
		{"nbd://h:0/", `port "0" is not a number from 1 to 65535`},
		{"nbd://h:65536/", "port"},
		{"nbd://h:99999999999999999999/", "port"},
		{"nbd://h:abc/", "port"},
		{"nbd://h:-1/", "port"},
		{"nbd://h/#frag", "fragments"},
		{"nbd://h/e#", "fragments"},
		{"nbd://h/%zz", "invalid URL escape"},
		{"nbd://h/%", "invalid URL escape"},
		{"nbd+unix:///?socket=%zz", `query parameter "socket"`},
		{"nbd+unix:///?%zz=1", "query parameter"},
		{"nbd://[::1/", "missing ']'"},
		{"nbd://[notanip]/", "invalid"},
		{"nbd://[1.2.3]/", "invalid host"},
		{"nbd://[::1%25]/", "zone"},
		{"nbd://[::1%25a%2Fb]/", "invalid"},
		{"nbd://::1/", "invalid"},
		{"nbd://h%20x/", "invalid"},
		{"nbd://h,x/", "bad host name"},
		{"nbd://h/a%00b", "NUL byte"},
		{"nbd://h/\x00", "invalid control character"},
		{"nbd://h/" + strings.Repeat("a", 4097), "longer than the NBD limit of 4096"},
	}
	if runtime.GOOS == "linux" {
		tests = append(tests, []struct {
			in      string
			errPart string
		}{
			{"nbd+unix:///?socket=%00", "abstract socket name (socket=%00…) is empty"},
			{"nbd+unix:///?socket=%00a%00b", "NUL byte after the start"},
		}...)
	} else {
		tests = append(tests, struct {
			in      string
			errPart string
		}{"nbd+unix:///?socket=%00abstract", "exist only on Linux"})
	}
	for _, tt := range tests {
		u, err := ParseURI(tt.in)
		if err == nil {
			t.Errorf("ParseURI(%q) = %+v, want error containing %q", tt.in, u, tt.errPart)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tt.errPart) {
			t.Errorf("ParseURI(%q) error %q, want it to contain %q", tt.in, msg, tt.errPart)
		}
		if !strings.HasPrefix(msg, "invalid NBD URI ") {
			t.Errorf("ParseURI(%q) error %q does not start with \"invalid NBD URI\"", tt.in, msg)
		}
	}
}

func TestURIString(t *testing.T) {
	tests := []struct {
		u    URI
		want string
	}{
		{URI{Transport: "tcp", Host: "localhost", Port: 10809}, "nbd://localhost/"},
		{URI{Transport: "tcp", Host: "localhost", Port: 0}, "nbd://localhost/"},
		{URI{Transport: "tcp", Host: "h", Port: 1234, Export: "disk"}, "nbd://h:1234/disk"},
		{URI{Transport: "tcp", Host: "::1", Port: 1234, Export: "disk"}, "nbd://[::1]:1234/disk"},
		{URI{Transport: "tcp", Host: "fe80::1%eth0", Port: 10809}, "nbd://[fe80::1%25eth0]/"},
		{URI{Transport: "tcp", Host: "h", Port: 10809, Export: "/disk"}, "nbd://h//disk"},
		{URI{Transport: "tcp", Host: "h", Port: 10809, Export: "a b?#%&+é"}, "nbd://h/a%20b%3F%23%25&+%C3%A9"},
		{URI{Transport: "tcp", Host: "h", Port: 10809, Export: "a/b:c@d"}, "nbd://h/a/b:c@d"},
		{URI{Transport: "unix", Socket: "/tmp/nbd.sock"}, "nbd+unix:///?socket=/tmp/nbd.sock"},
		{URI{Transport: "unix", Socket: "/run/user/1000/x-y_z~.sock", Export: "e"}, "nbd+unix:///e?socket=/run/user/1000/x-y_z~.sock"},
		{URI{Transport: "unix", Socket: "/tmp/a b+c&d=e#f?g%h.sock", Export: "x"}, "nbd+unix:///x?socket=/tmp/a%20b%2Bc%26d%3De%23f%3Fg%25h.sock"},
		{URI{Transport: "unix", Socket: "\x00abstract"}, "nbd+unix:///?socket=%00abstract"},
		{URI{Transport: "unix", Socket: "s", Export: "/disk"}, "nbd+unix:////disk?socket=s"},
	}
	for _, tt := range tests {
		got := tt.u.String()
		if got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.u, got, tt.want)
		}
		if tt.u.Socket != "" && tt.u.Socket[0] == 0 && runtime.GOOS != "linux" {
			continue
		}
		back, err := ParseURI(got)
		want := tt.u
		if want.Transport == "tcp" && want.Port == 0 {
			want.Port = DefaultPort
		}
		if err != nil || back != want {
			t.Errorf("ParseURI(%q) = %+v, %v; want %+v", got, back, err, want)
		}
	}
}

func TestURIDialAddress(t *testing.T) {
	tests := []struct {
		u       URI
		network string
		address string
	}{
		{URI{Transport: "tcp", Host: "localhost", Port: 10809}, "tcp", "localhost:10809"},
		{URI{Transport: "tcp", Host: "h", Port: 0}, "tcp", "h:10809"},
		{URI{Transport: "tcp", Host: "::1", Port: 1234}, "tcp", "[::1]:1234"},
		{URI{Transport: "tcp", Host: "fe80::1%eth0", Port: 1}, "tcp", "[fe80::1%eth0]:1"},
		{URI{Transport: "unix", Socket: "/tmp/s"}, "unix", "/tmp/s"},
		{URI{Transport: "unix", Socket: "rel.sock"}, "unix", "rel.sock"},
		{URI{Transport: "unix", Socket: "\x00abstract"}, "unix", "@abstract"},
		{URI{Transport: "unix", Socket: "@file"}, "unix", "./@file"},
		{URI{}, "tcp", ":10809"},
	}
	for _, tt := range tests {
		if got := tt.u.Network(); got != tt.network {
			t.Errorf("%+v.Network() = %q, want %q", tt.u, got, tt.network)
		}
		if got := tt.u.Address(); got != tt.address {
			t.Errorf("%+v.Address() = %q, want %q", tt.u, got, tt.address)
		}
	}
}

// uriFuzzSeeds are interesting URIs, valid and not.
var uriFuzzSeeds = []string{
	"nbd://localhost", "nbd://localhost/", "nbd://localhost:10809/disk",
	"nbd://h//disk", "nbd://h/a%20b", "nbd://h/a%2Fb", "nbd://h/%C3%A9", "nbd://h/é",
	"nbd://[::1]/x", "nbd://[::1]:1234", "nbd://[fe80::1%25eth0]/", "nbd://[::1%25]/",
	"nbd://[::ffff:1.2.3.4]/", "nbd://[1.2.3.4]/", "nbd://%5B::1%5D/", "nbd://ex%41mple/",
	"nbd://h:/e", "nbd://h:0/", "nbd://h:65536/", "nbd://h:abc/", "nbd://:1/",
	"NBD://Host/E", "nbd+tcp://h/e", "nbds://h/", "nbds+unix:///?socket=/s",
	"nbd+vsock://1:2/", "nbd:h:1", "nbd:unix:/s", "nbd:///e", "nbd://", "nbd:",
	"nbd://u@h/", "nbd://h/?tls-type=psk", "nbd://h/?foo", "nbd://h/?socket=/s",
	"nbd://h/#f", "nbd://h/%zz", "nbd://h/a%00b", "nbd://h/?&&",
	"nbd+unix:///?socket=/tmp/s", "nbd+unix://?socket=/tmp/s", "nbd+unix:////d?socket=s",
	"nbd+unix:/d?socket=s", "nbd+unix:d?socket=s", "nbd+unix:///?socket=%2Ftmp%2Fa%20b",
	"nbd+unix:///?socket=/a+b", "nbd+unix:///?socket=%00abs", "nbd+unix:///?socket=%00",
	"nbd+unix:///?socket=@x", "nbd+unix:///?socket=/a&socket=/b", "nbd+unix:///?socket=",
	"nbd+unix://h/?socket=/s", "nbd+unix:///?soc%6Bet=/s", "nbd+unix:///?socket=/s;x=y",
	"nbd+unix:///?socket=/s%3Fq%23f", "nbd://h/%25", "nbd://h/;/:@!$&'()*+,=",
	"nbd://h/?x-a=1", "//h/", "/tmp/s", "", ":", "nbd://h\x00/",
}

func FuzzParseURI(f *testing.F) {
	for _, s := range uriFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURI(s)
		if err != nil {
			if u != (URI{}) {
				t.Fatalf("ParseURI(%q) failed but returned %+v", s, u)
			}
			return
		}
		switch u.Transport {
		case "tcp":
			if u.Host == "" || u.Port < 1 || u.Port > 65535 || u.Socket != "" {
				t.Fatalf("ParseURI(%q) = %+v: bad tcp URI", s, u)
			}
		case "unix":
			if u.Socket == "" || u.Host != "" || u.Port != 0 {
				t.Fatalf("ParseURI(%q) = %+v: bad unix URI", s, u)
			}
		default:
			t.Fatalf("ParseURI(%q) = %+v: bad transport", s, u)
		}
		out := u.String()
		back, err := ParseURI(out)
		if err != nil {
			t.Fatalf("ParseURI(%q) = %+v, but its String %q does not parse: %v", s, u, out, err)
		}
		if back != u {
			t.Fatalf("ParseURI(%q) = %+v, String %q parses to %+v", s, u, out, back)
		}
		if out2 := back.String(); out2 != out {
			t.Fatalf("String not stable: %q then %q", out, out2)
		}
		_ = u.Network()
		_ = u.Address()
	})
}
