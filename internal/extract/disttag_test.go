package extract

import "testing"

func TestRPMDistro(t *testing.T) {
	tests := []struct {
		name                 string
		release, vendor, rel string // package release, vendor, kernel release
		distro, version      string
	}{
		{"el7", "1160.119.1.el7", "CentOS", "3.10.0-1160.119.1.el7.x86_64", "centos", "7"},
		{"el8 without vendor", "513.5.1.el8_9", "", "4.18.0-513.5.1.el8_9.x86_64", "centos", "8"},
		{"el9 from Red Hat", "427.13.1.el9_4", "Red Hat, Inc.", "5.14.0-427.13.1.el9_4.x86_64", "rhel", "9"},
		{"el9 rebuild", "427.13.1.el9_4", "Rocky Enterprise Software Foundation", "5.14.0-427.13.1.el9_4.x86_64", "centos", "9"},
		{"el8 from Oracle", "513.5.1.0.1.el8_9", "Oracle America", "4.18.0-513.5.1.0.1.el8_9.x86_64", "ol", "8"},
		{"Oracle UEK", "2136.300.7.el8uek", "Oracle America", "5.4.17-2136.300.7.el8uek.x86_64", "ol", "8"},
		{"ol8", "1.ol8", "", "", "ol", "8"},
		{"fc40", "301.fc40", "Fedora Project", "6.8.5-301.fc40.x86_64", "fedora", "40"},
		{"amzn2", "203.850.amzn2", "Amazon Linux", "5.10.215-203.850.amzn2.x86_64", "amzn", "2"},
		{"amzn2023", "99.167.amzn2023", "Amazon Linux", "6.1.79-99.167.amzn2023.x86_64", "amzn", "2023"},
		{"amzn1", "196.647.amzn1", "", "4.14.355-196.647.amzn1.x86_64", "amzn", "1"},
		{"tag only in the kernel release", "1", "", "5.14.0-70.el9.x86_64", "centos", "9"},
		{"no tag", "1", "", "6.7.0", "", ""},
		{"el without a version", "1.elf", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, v, _ := RPMDistro(RPMHeader{Release: tt.release, Vendor: tt.vendor}, tt.rel)
			if d != tt.distro || v != tt.version {
				t.Errorf("RPMDistro(%q, %q, %q) = %s/%s, want %s/%s", tt.release, tt.vendor, tt.rel, d, v, tt.distro, tt.version)
			}
		})
	}
}
